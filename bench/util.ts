/** Small helpers shared by the benchmarks: timing, percentiles, table printing. */
import Database from 'better-sqlite3';
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import { CLAIM_RESERVE_SQL } from '../src-main/core/tasks/task-repo';
import { newTraceId } from '../src-main/core/ids';
import path from 'node:path';

export function benchDir(name: string): string {
  const base = process.env.GAFFER_BENCH_DIR ?? os.tmpdir();
  fs.mkdirSync(base, { recursive: true });
  return fs.mkdtempSync(path.join(base, `gaffer-bench-${name}-`));
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export function median(xs: number[]): number {
  return percentile([...xs].sort((a, b) => a - b), 50);
}

export function printTable(title: string, rows: Array<Record<string, string | number>>): void {
  console.log(`\n## ${title}\n`);
  if (rows.length === 0) return;
  const cols = Object.keys(rows[0]!);
  const fmt = (v: string | number) => (typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(2)) : v);
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => fmt(r[c] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(cols));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(cols.map((c) => fmt(r[c] ?? ''))));
}

export function machineInfo(): string {
  const cpu = os.cpus()[0]?.model ?? 'unknown cpu';
  return `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, ${os.platform()} ${os.release()}`;
}

/** Two bare single-row transactions per "pair", WAL + FULL: what the disk allows. */
export function openBare(dir: string): { run(pairs: number): number; close(): void } {
  const db = new Database(path.join(dir, 'bare.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  const upd = db.prepare('UPDATE t SET v = v + 1 WHERE id = ?');
  const insTx = db.transaction((v: number) => Number(ins.run(v).lastInsertRowid));
  const updTx = db.transaction((id: number) => upd.run(id));
  return {
    run(pairs) {
      const t0 = performance.now();
      for (let i = 0; i < pairs; i++) updTx(insTx(i));
      return pairs / ((performance.now() - t0) / 1000);
    },
    close: () => db.close(),
  };
}

/**
 * Queues `n` claimable tasks for role `dev` (priorities 0–9 in turn), fast: raw INSERTs storing the
 * row as `tasks.create` would (trace id and claim reserve included), 50 000 per transaction.
 */
export function seedBacklog(db: Database.Database, n: number): void {
  const now = Date.now();
  const ins = db.prepare(`INSERT INTO tasks (title, role, status, priority, payload, depends_on, trace_id, unmet_deps, created_at, updated_at, claim_reserve)
    VALUES (?, 'dev', 'backlog', ?, '{"n":1}', '[]', ?, 0, ?, ?, ${CLAIM_RESERVE_SQL})`);
  const BATCH = 50_000;
  for (let done = 0; done < n; done += BATCH) {
    db.transaction(() => {
      for (let i = done; i < Math.min(n, done + BATCH); i++) ins.run(`task ${i}`, i % 10, newTraceId(), now, now);
    })();
  }
}

// IPC messages are whatever the child sent: one deliberate escape hatch for reading them.
type ChildMessage = any;

/** A forked bench child, driven over IPC. */
export interface Child {
  proc: ChildProcess;
  next(): Promise<ChildMessage>;
  send(m: unknown): void;
}

/**
 * Forks a bench child (a TypeScript file, through tsx) and waits for its first message ("up", or a
 * start report). `ownSession`: the child runs in a session of its own (setsid), as an agent program
 * started on its own does — on Linux with autogroup scheduling the CPU is shared out per session,
 * so a child left in the bench's session competes with the bench's other children for that
 * session's share. Such a child must exit when its IPC channel closes (the bench gone, even by
 * SIGKILL), since the bench's process group no longer reaches it.
 */
export async function spawnChild(file: string, execArgv: string[] = [], opts: { ownSession?: boolean } = {}): Promise<{ child: Child; first: ChildMessage }> {
  const proc = fork(file, [], { execArgv: ['--import', import.meta.resolve('tsx'), ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: opts.ownSession === true });
  const inbox: ChildMessage[] = [];
  const waiters: Array<(m: ChildMessage) => void> = [];
  proc.on('message', (m) => {
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const child: Child = {
    proc,
    send: (m) => proc.send(m as object),
    next: () =>
      new Promise((resolve, reject) => {
        const take = (m: ChildMessage) => (m && m.error ? reject(new Error(m.error)) : resolve(m));
        if (inbox.length > 0) take(inbox.shift());
        else waiters.push(take);
      }),
  };
  return { child, first: await child.next() };
}

/** Asks a bench child to exit and waits until it has. */
export async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null) return;
  const exited = new Promise((r) => child.proc.once('exit', r));
  child.send({ cmd: 'exit' });
  await exited;
}

/** Enough agent tokens for 1 024 sockets (one token holds at most 64 at once), comma-separated for bench/hub-agents.ts. */
export function benchTokens(core: { tokens: { create(input: { name: string; role: string; actor: string }): { token: string } } }): string {
  return Array.from({ length: 16 }, (_, k) => core.tokens.create({ name: `bench-${k}`, role: 'bench', actor: 'bench' }).token).join(',');
}
