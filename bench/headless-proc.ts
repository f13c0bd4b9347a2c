/**
 * The real headless start chain, measured from outside (Linux /proc): `npm start -- --headless`
 * (npm → the start script → the server), as an operator runs it. It runs under a small `sh` that
 * interrupts it when the bench's pipe closes, so it never outlives the bench, not even a kill -9.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendants } from './proc';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BENCH_OPERATOR_TOKEN = 'gfo_bench_operator_token_0123456789abcdef';

export interface Headless {
  /** When the spawn was issued (performance.now()). */
  spawnedAt: number;
  /** When the console URL was printed. */
  printedAt: number;
  url: string;
  agentUrl: string;
  /** The process that runs the server (the one holding the port). */
  serverPid: number;
  /** npm's pid: the root of the chain. */
  rootPid: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `NODE_OPTIONS` with `--import` of each preload module (bench/*.mjs, by URL) after what this process
 * has: for the start chain only (`startHeadless`'s `env`), not this process's other children.
 */
export function withPreloads(...preloads: URL[]): string {
  return [process.env.NODE_OPTIONS ?? '', ...preloads.map((u) => `--import=${u.href}`)].join(' ').trim();
}

/** `env`: added to the start chain's environment (a preload's NODE_OPTIONS, its output file), never to this process's. */
export async function startHeadless(dataDir: string, extraArgs: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<Headless> {
  const args = ['start', '--', '--headless', '--port', '0', '--data-dir', dataDir, ...extraArgs];
  const spawnedAt = performance.now();
  const proc: ChildProcess = spawn('sh', ['-c', 'npm "$@" & p=$!; echo "pid $p" >&2; read _; kill -INT $p; wait $p', 'sh', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env, GAFFER_OPERATOR_TOKEN: BENCH_OPERATOR_TOKEN, npm_config_loglevel: 'silent' },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  proc.stderr!.on('data', (d) => (out += String(d)));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const m = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gaffer did not start within 120 s:\n${out}`)), 120_000);
    const check = () => {
      const hit = /console at (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
      if (hit) {
        clearTimeout(timer);
        resolve(hit);
      } else if (proc.exitCode !== null) reject(new Error(`gaffer exited at start:\n${out}`));
      else setTimeout(check, 2);
    };
    check();
  });
  const printedAt = performance.now();
  const rootPid = Number(/pid (\d+)/.exec(out)![1]);
  const port = Number(m[2]);
  return {
    spawnedAt,
    printedAt,
    url: m[1]!,
    agentUrl: `ws://127.0.0.1:${port}/agent`,
    serverPid: listenerPid(port, [rootPid, ...descendants(rootPid)]),
    rootPid,
    output: () => out,
    async stop() {
      proc.stdin!.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-proc.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    },
  };
}

/** Which of `pids` has a socket listening on `port` (inode match through /proc/net/tcp). */
function listenerPid(port: number, pids: number[]): number {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of fs.readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A') inodes.add(f[9]!);
    }
  }
  for (const pid of pids) {
    try {
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        const link = fs.readlinkSync(`/proc/${pid}/fd/${fd}`);
        const ino = /^socket:\[(\d+)\]$/.exec(link)?.[1];
        if (ino && inodes.has(ino)) return pid;
      }
    } catch {
      /* not ours to read, or gone */
    }
  }
  throw new Error(`no process of the chain listens on port ${port}`);
}

