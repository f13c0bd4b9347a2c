/**
 * The console served to a browser by the headless server: the built renderer, the console API
 * over HTTP and live events over a WebSocket (`server/console/http.ts`), protected by the
 * operator token the browser receives in the URL fragment printed at start-up.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Core } from '../core/create-core';
import { DEFAULT_VERSION } from '../server/api-v1';
import { createConsoleExtension } from '../server/console/http';
import type { JobsConsolePort } from '../server/console/methods';
import type { ServerExtension } from '../server/server';

export interface ConsoleHostOptions {
  operatorToken: string;
  dataDir: string;
  /** The built renderer; default `GAFFER_RENDERER_DIR` or `<repo>/out/renderer`. */
  rendererDir?: string;
  version?: string;
  /** Wired once the jobs module exists. */
  jobs?: JobsConsolePort;
}

/** `<repo>/out/renderer`, found from this file (src-main/headless/) so the cwd does not matter. */
export function defaultRendererDir(): string {
  if (process.env.GAFFER_RENDERER_DIR) return path.resolve(process.env.GAFFER_RENDERER_DIR);
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'out', 'renderer');
}

export function consoleExtensions(core: Core, opts: ConsoleHostOptions): Array<(port: number) => ServerExtension> {
  return [
    createConsoleExtension(core, {
      operatorToken: opts.operatorToken,
      rendererDir: opts.rendererDir ?? defaultRendererDir(),
      dataDir: opts.dataDir,
      version: opts.version ?? DEFAULT_VERSION,
      ...(opts.jobs ? { jobs: opts.jobs } : {}),
    }),
  ];
}
