/**
 * `captureConsole`: while a handler runs, what it prints with `console.*` also goes to its log.
 * The console is patched once; each call finds the handler it came from through
 * AsyncLocalStorage, so handlers running at the same time keep their lines apart, and code
 * outside a handler prints as before. The original output is kept.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { format } from 'node:util';
import type { LogOptions } from './log-outbox';

type Sink = (text: string, opts: LogOptions) => void;

const current = new AsyncLocalStorage<Sink>();
const METHODS: Array<[keyof Console & ('log' | 'info' | 'warn' | 'error' | 'debug'), LogOptions]> = [
  ['log', { stream: 'stdout', level: 'info' }],
  ['info', { stream: 'stdout', level: 'info' }],
  ['debug', { stream: 'stdout', level: 'debug' }],
  ['warn', { stream: 'stderr', level: 'warn' }],
  ['error', { stream: 'stderr', level: 'error' }],
];
let patched = false;

function patch(): void {
  if (patched) return;
  patched = true;
  for (const [name, opts] of METHODS) {
    const original = console[name].bind(console);
    console[name] = (...args: unknown[]) => {
      original(...args);
      const sink = current.getStore();
      if (sink) sink(format(...args), opts);
    };
  }
}

/** Runs `fn` with `console.*` also written to `sink`. */
export function withConsoleCapture<T>(sink: Sink, fn: () => T): T {
  patch();
  return current.run(sink, fn);
}
