/**
 * The command agent's side of its watchdog (watchdog.mjs): commands die with their agent.
 *
 * Invariants:
 * 1. The watchdog runs before the first command starts and for as long as the agent runs; it is
 *    started again (and told the groups still running) if it ever exits on its own.
 * 2. Every command carries GAFFER_LIFELINE (`<agent key>/<n>`, not a secret) in its environment, so
 *    what it starts is found even after leaving its group; the watchdog is told each command's
 *    process group when it starts and when it is gone (`hold` / `release`).
 * 3. When the agent ends (normally, or killed with -9) the pipe to the watchdog closes and the
 *    watchdog ends what is left of every command (watchdog.mjs invariant 2). `close` does it on a
 *    normal exit; the agent never waits for the watchdog, and the watchdog never keeps it running.
 * 4. Windows has no process groups: there it does nothing (the markers are still set).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const LIFELINE_VARIABLE = 'GAFFER_LIFELINE';

const WATCHDOG = path.join(path.dirname(fileURLToPath(import.meta.url)), 'watchdog.mjs');

export interface LifelineOptions {
  /** The watchdog's environment (no secrets: the commands' inherited environment). */
  env: Record<string, string>;
  /** SIGTERM → SIGKILL delay for what the watchdog ends. */
  killAfterMs: number;
  /** Told when the watchdog exited on its own (it is started again at the next command). */
  onProblem(message: string): void;
  /** The Node.js binary (default: this one). */
  node?: string;
}

export class Lifeline {
  /** Distinguishes this agent's markers from every other agent's. */
  readonly key = `${process.pid}-${randomBytes(6).toString('hex')}`;
  private seq = 0;
  private watchdog: ChildProcess | undefined;
  private readonly groups = new Set<number>();
  private closed = false;
  private readonly enabled = process.platform !== 'win32';

  constructor(private readonly opts: LifelineOptions) {}

  /** The marker for the next command; the watchdog runs once this returns (invariant 1). */
  nextMarker(): { variable: string; value: string } {
    this.ensureWatchdog();
    return { variable: LIFELINE_VARIABLE, value: `${this.key}/${++this.seq}` };
  }

  hold(pgid: number | undefined): void {
    if (pgid === undefined || !this.enabled) return;
    this.groups.add(pgid);
    this.send(`+${pgid}`);
  }

  release(pgid: number | undefined): void {
    if (pgid === undefined || !this.groups.delete(pgid)) return;
    this.send(`-${pgid}`);
  }

  /** The agent is done: the watchdog ends what is left (leftovers carrying a marker) and exits. */
  close(): void {
    this.closed = true;
    this.watchdog?.stdin?.end();
  }

  /** The watchdog's pid (tests). */
  get watchdogPid(): number | undefined {
    return this.watchdog?.pid;
  }

  private ensureWatchdog(): void {
    if (!this.enabled || this.closed || this.watchdog) return;
    const child = spawn(this.opts.node ?? process.execPath, [WATCHDOG, '--marker-prefix', `${this.key}/`, '--kill-after-ms', String(this.opts.killAfterMs)], {
      env: this.opts.env,
      // Not detached: it is in the agent's group, so a supervisor that waits for that group to be
      // empty waits for the watchdog's work too. It ignores the signals meant for the agent.
      stdio: ['pipe', 'ignore', 'inherit'],
      windowsHide: true,
    });
    this.watchdog = child;
    const startedAt = Date.now();
    child.stdin?.on('error', () => {});
    child.once('error', () => {});
    child.once('exit', (code, signal) => {
      if (this.watchdog === child) this.watchdog = undefined;
      if (this.closed) return;
      // Started again at once while commands run, unless it cannot even start (then at the next command).
      const again = this.groups.size > 0 && Date.now() - startedAt > 1000;
      this.opts.onProblem(`the watchdog that ends the commands if the agent dies exited (${code ?? signal}); ${again ? 'starting another' : 'it is started again with the next command'}`);
      if (again) this.ensureWatchdog();
    });
    // The agent's exit must not wait for the watchdog (invariant 3).
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    for (const g of this.groups) this.send(`+${g}`);
  }

  private send(line: string): void {
    this.watchdog?.stdin?.write(`${line}\n`);
  }
}
