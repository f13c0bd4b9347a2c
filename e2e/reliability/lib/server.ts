/**
 * The real headless Gaffer as a child process: `node --import tsx src-main/headless/main.ts
 * --port <port> --data-dir <dir> …`, always on 127.0.0.1. Restartable on the same port and data
 * directory (kill -9 scenarios).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ROOT, spawnTsx, type Proc } from './procs';

export const HEADLESS_MAIN = path.join(ROOT, 'src-main', 'headless', 'main.ts');

const made: string[] = [];

/** A fresh directory under the OS temp dir, removed by `removeTempDirs()` at the end of the file. */
export function tempDir(label: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `gaffer-rel-${label}-`));
  made.push(dir);
  return dir;
}

/** Removes every temp dir this process made (kept with GAFFER_RELIABILITY_KEEP=1, for post-mortems). */
export function removeTempDirs(): void {
  if (process.env.GAFFER_RELIABILITY_KEEP === '1') return;
  for (const dir of made.splice(0)) {
    try {
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      /* a mount point still busy: left for the OS */
    }
  }
}

/** A port that was free a moment ago on 127.0.0.1 (the server is then started on it, and restarted on it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface ServerOptions {
  dataDir: string;
  port: number;
  operatorToken?: string;
  /** Scheduler timings (seconds unless named …Ms), passed as CLI flags. */
  lockWindowS?: number;
  heartbeatTimeoutS?: number;
  sweepIntervalS?: number;
  reconnectGraceS?: number;
  idempotencyWindowS?: number;
  heartbeatIntervalMs?: number;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Run the server as another user (read-only permission scenarios). */
  uid?: number;
  gid?: number;
}

export interface Server {
  proc: Proc;
  port: number;
  dataDir: string;
  dbPath: string;
  operatorToken: string;
  url: string;
  agentUrl: string;
  log(): string;
  alive(): boolean;
  kill9(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL after `ms`. */
  stop(ms?: number): Promise<void>;
}

export function newOperatorToken(): string {
  return `gfo_rel_${randomBytes(24).toString('base64url')}`;
}

function argsFor(o: ServerOptions): string[] {
  const flag = (name: string, v: number | undefined) => (v === undefined ? [] : [name, String(v)]);
  return [
    '--port',
    String(o.port),
    '--data-dir',
    o.dataDir,
    ...flag('--lock-window-s', o.lockWindowS),
    ...flag('--heartbeat-timeout-s', o.heartbeatTimeoutS),
    ...flag('--sweep-interval-s', o.sweepIntervalS),
    ...flag('--reconnect-grace-s', o.reconnectGraceS),
    ...flag('--idempotency-window-s', o.idempotencyWindowS),
    ...flag('--heartbeat-interval-ms', o.heartbeatIntervalMs),
    ...(o.extraArgs ?? []),
  ];
}

function spawnServer(o: ServerOptions, token: string): Proc {
  return spawnTsx(HEADLESS_MAIN, argsFor(o), {
    env: { ...o.env, GAFFER_OPERATOR_TOKEN: token, GAFFER_RENDERER_DIR: path.join(o.dataDir, 'no-renderer') },
    ...(o.uid !== undefined ? { uid: o.uid } : {}),
    ...(o.gid !== undefined ? { gid: o.gid } : {}),
  });
}

/** Starts the server and resolves once it listens (it printed its agent URL). */
export async function startServer(o: ServerOptions, timeoutMs = 30_000): Promise<Server> {
  const operatorToken = o.operatorToken ?? newOperatorToken();
  const proc = spawnServer(o, operatorToken);
  await proc.waitFor(/^gaffer: agents connect to ws:\/\/127\.0\.0\.1:\d+\/agent/, timeoutMs);
  const url = `http://127.0.0.1:${o.port}`;
  return {
    proc,
    port: o.port,
    dataDir: o.dataDir,
    dbPath: path.join(o.dataDir, 'gaffer.db'),
    operatorToken,
    url,
    agentUrl: `ws://127.0.0.1:${o.port}/agent`,
    log: () => proc.output(),
    alive: () => proc.alive(),
    kill9: () => proc.kill9(),
    async stop(ms = 10_000) {
      if (!proc.alive()) return;
      proc.signal('SIGTERM');
      const t = setTimeout(() => proc.signal('SIGKILL'), ms);
      await proc.exited;
      clearTimeout(t);
    },
  };
}

/** Runs the server expecting it to refuse to start: resolves with its exit and output. */
export async function runToExit(o: ServerOptions, timeoutMs = 30_000): Promise<{ code: number | null; signal: string | null; output: string; stderr: string[] }> {
  const proc = spawnServer(o, o.operatorToken ?? newOperatorToken());
  const t = setTimeout(() => proc.signal('SIGKILL'), timeoutMs);
  const exit = await proc.exited;
  clearTimeout(t);
  const output = proc.output();
  const stdout = new Set(proc.lines());
  const stderr = output.split('\n').filter((l) => l.trim() && !stdout.has(l));
  return { code: exit.code, signal: exit.signal, output, stderr };
}
