/**
 * Child processes started by the suite (servers, agents). Every one is registered here and killed
 * by pid at the end of its test file (and, as a last resort, when the test process exits), so a
 * failing scenario never leaves a server or a SIGSTOPped agent behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const live = new Set<ChildProcess>();

export interface Proc {
  child: ChildProcess;
  readonly pid: number;
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Lines written to stdout so far. */
  lines(): string[];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves with the first stdout line matching `re` (including lines already printed). */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  alive(): boolean;
  /** Sends `signal` to this process only (by pid). */
  signal(sig: NodeJS.Signals): void;
  /** SIGKILL and wait for the exit. */
  kill9(): Promise<void>;
}

/** Spawns `node --import tsx <script> …args` (cwd = repo root), registered for cleanup. */
export function spawnTsx(script: string, args: string[], opts: SpawnOptions & { env?: NodeJS.ProcessEnv } = {}): Proc {
  return spawnNode(['--import', 'tsx', script, ...args], opts);
}

/** Spawns `node …args` (cwd = repo root; e.g. a script of scripts/), registered for cleanup. */
export function spawnNode(args: string[], opts: SpawnOptions & { env?: NodeJS.ProcessEnv } = {}): Proc {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...opts,
    env: { ...process.env, ...(opts.env ?? {}) },
  });
  live.add(child);
  let out = '';
  let partial = '';
  const lines: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  child.stdout!.on('data', (d: Buffer) => {
    const s = d.toString('utf8');
    out += s;
    partial += s;
    const parts = partial.split('\n');
    partial = parts.pop()!;
    for (const l of parts) {
      lines.push(l);
      for (const w of [...waiters]) {
        if (w.re.test(l)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(l);
        }
      }
    }
  });
  child.stderr!.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stdin?.on('error', () => {
    /* the child may die while we write to it (kill -9 scenarios) */
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    }),
  );
  const proc: Proc = {
    child,
    pid: child.pid!,
    output: () => out,
    lines: () => lines,
    exited,
    waitFor(re, timeoutMs = 30_000) {
      const hit = lines.find((l) => re.test(l));
      if (hit !== undefined) return Promise.resolve(hit);
      return new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`pid ${child.pid} did not print ${re} within ${timeoutMs} ms:\n${out.slice(-4000)}`)), timeoutMs);
        const w = {
          re,
          resolve: (l: string) => {
            clearTimeout(t);
            resolve(l);
          },
        };
        waiters.push(w);
        void exited.then(() => {
          if (!waiters.includes(w)) return;
          waiters.splice(waiters.indexOf(w), 1);
          clearTimeout(t);
          reject(new Error(`pid ${child.pid} exited before printing ${re}:\n${out.slice(-4000)}`));
        });
      });
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    signal(sig) {
      if (proc.alive()) process.kill(child.pid!, sig);
    },
    async kill9() {
      if (proc.alive()) {
        // SIGKILL also ends a stopped (SIGSTOP) process, so no SIGCONT is sent first.
        try {
          process.kill(child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
      await exited;
    },
  };
  return proc;
}

/** Kills every child this test process started and waits for them. */
export async function killAllChildren(): Promise<void> {
  const all = [...live];
  for (const c of all) {
    try {
      if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await Promise.all(all.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once('exit', r)))));
}

process.once('exit', () => {
  for (const c of live) {
    try {
      if (c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

export const AGENT_PROC = path.join(ROOT, 'e2e', 'reliability', 'lib', 'agent-proc.ts');

// Events printed by agent-proc.ts (wire data: untyped on purpose).
export type AgentEvent = { ev: string; t: number } & Record<string, any>;

export interface AgentProc extends Proc {
  instanceId: string;
  events(): AgentEvent[];
  /** Resolves with the first event (already printed or future) for which `pred` holds. */
  waitEvent(pred: (e: AgentEvent) => boolean, what: string, timeoutMs?: number): Promise<AgentEvent>;
  send(cmd: Record<string, unknown>): void;
}

/** An SDK agent in a child process (lib/agent-proc.ts); resolves once it is connected. */
export async function spawnAgentProc(url: string, token: string, name: string, opts: { role?: string; reconnect?: boolean } = {}): Promise<AgentProc> {
  const proc = spawnTsx(AGENT_PROC, [], { env: { GAFFER_URL: url, GAFFER_TOKEN: token, NAME: name, ROLE: opts.role ?? 'dev', RECONNECT: opts.reconnect ? '1' : '0' } });
  const events = (): AgentEvent[] =>
    proc
      .lines()
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as AgentEvent);
  const waitEvent = async (pred: (e: AgentEvent) => boolean, what: string, timeoutMs = 15_000): Promise<AgentEvent> => {
    const start = Date.now();
    for (;;) {
      const hit = events().find(pred);
      if (hit) return hit;
      if (!proc.alive()) throw new Error(`agent ${name} exited before ${what}:\n${proc.output().slice(-3000)}`);
      if (Date.now() - start > timeoutMs) throw new Error(`agent ${name}: no ${what} within ${timeoutMs} ms:\n${proc.output().slice(-3000)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const ready = await waitEvent((e) => e.ev === 'ready', 'ready', 30_000);
  return Object.assign(proc, {
    instanceId: ready.instanceId as string,
    events,
    waitEvent,
    send: (cmd: Record<string, unknown>) => {
      proc.child.stdin?.write(`${JSON.stringify(cmd)}\n`);
    },
  });
}
