/**
 * A durable Redis for the peer benchmark: `redis-server --appendonly yes --appendfsync always` (every
 * write fsynced before its reply, as Gaffer's synchronous=FULL commit is), on a free loopback port,
 * in a temp dir, started and stopped by the bench. It runs under a small `sh` that kills it when its
 * stdin closes, so it never outlives the bench — not even a `kill -9` of it.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { Redis } from 'ioredis';
import { freePort } from '../e2e/reliability/lib/server';
import os from 'node:os';
import path from 'node:path';

export interface DurableRedis {
  port: number;
  /** The redis-server process (for its CPU time). */
  pid: number;
  close(): Promise<void>;
}

/** Why there is no Redis to compare with, or null when `redis-server` can run here. */
export function redisMissing(): string | null {
  const r = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return r.error || r.status !== 0 ? 'redis-server is not installed (Debian: apt-get install redis-server)' : null;
}

async function untilListening(port: number): Promise<void> {
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const sock = net.connect(port, '127.0.0.1', () => (sock.end(), resolve(true)));
      sock.once('error', () => resolve(false));
    });
    if (up) return;
    if (i > 400) throw new Error(`redis-server is not listening on port ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

export async function startDurableRedis(): Promise<DurableRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-bench-redis-'));
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', '--daemonize', 'no', '--loglevel', 'warning'];
  const proc: ChildProcess = spawn('sh', ['-c', 'redis-server "$@" & r=$!; read _; kill $r; wait $r', 'sh', ...args], {
    stdio: ['pipe', 'ignore', 'inherit'],
    detached: true,
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  // Readiness, its pid (for CPU time) and the durability setting, asked of the server itself.
  await Promise.race([untilListening(port), exited.then(() => Promise.reject(new Error('redis-server exited at start')))]);
  const admin = new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null });
  let pid: number;
  try {
    pid = Number(/process_id:(\d+)/.exec(await admin.info('server'))?.[1]);
    const fsync = (await admin.config('GET', 'appendfsync')) as string[];
    if (fsync[1] !== 'always') throw new Error(`redis appendfsync is ${fsync[1]}, not always`);
  } finally {
    admin.disconnect();
  }
  return {
    port,
    pid,
    async close() {
      proc.stdin!.end();
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      try {
        process.kill(-proc.pid!, 'SIGKILL'); // the whole group, if anything is left
      } catch {
        /* gone */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
