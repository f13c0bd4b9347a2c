/**
 * The route of one job trigger, measured at run time (issue 12): a real core on a manual clock,
 * the production agent socket (`server/agent-socket.ts`) and one agent on a real WebSocket. It
 * prints
 *  - the call stack from the runner's timer callback to the write that marks the attempt out, and
 *    to `ws.send` of the `job_trigger`: calls, files, core files, and how often the stack crosses
 *    between the jobs engine (`core/jobs`) and the hub (`core/hub`);
 *  - every transaction one trigger costs (timer → agent → result), with the audit rows each wrote.
 * Run: npx tsx bench/trigger-route.ts   (or as part of `npm run bench -- jobs`)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { ManualClock } from '../src-main/common/clock';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { benchDir, printTable } from './util';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

interface Frame {
  fn: string;
  file: string;
}

/** The frames of a V8 stack, innermost first, as repository-relative files. */
function framesOf(stack: string): Frame[] {
  const out: Frame[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const m = /^\s*at (?:(.*?) \()?(.*?):\d+:\d+\)?$/.exec(line);
    if (!m) continue;
    const file = m[2]!.startsWith('file://') ? fileURLToPath(m[2]!) : m[2]!;
    out.push({ fn: m[1] ?? '<anonymous>', file: path.relative(repoRoot, file) });
  }
  return out;
}

export interface RouteFigures {
  /** Frames from the timer callback to the write that marks the attempt out (both ends counted). */
  callsToDispatch: number;
  filesToDispatch: number;
  /** Frames from the timer callback to `ws.send` of the job_trigger (both ends counted). */
  callsToSend: number;
  coreFilesToSend: number;
  /** Calls on that stack from core/jobs into core/hub or back. */
  crossings: number;
  /** Outermost transactions from the due instant to the `run_result` reply. */
  transactions: number;
  stackToSend: string[];
  commits: string[][];
}

/**
 * The part of a stack (outermost first) from the timer's callback up: the first frame above the
 * clock's own timer machinery.
 */
function fromTimer(frames: Frame[]): Frame[] {
  const outerFirst = [...frames].reverse();
  // The clock's machinery and the gap detector's wrapper (it reads the clocks first) are not the route.
  let i = -1;
  outerFirst.forEach((f, k) => {
    if (f.file.endsWith('common/clock.ts') || f.file.endsWith('time/gap-detector.ts')) i = k;
  });
  return outerFirst.slice(i + 1).filter((f) => !f.file.startsWith('node_modules') && !f.file.startsWith('node:') && f.file !== 'bench/trigger-route.ts');
}

export async function measureTriggerRoute(): Promise<RouteFigures> {
  Error.stackTraceLimit = Infinity;
  const clock = new ManualClock('2026-11-30T00:59:00.000Z');
  // The runner's own timer on the due instant (not the safety sweep) fires the trigger.
  const core = createCore({ clock, dataDir: benchDir('route'), config: { sweepIntervalS: 3600 }, hub: { pingIntervalMs: 0 } });
  const server = http.createServer((_q, r) => r.writeHead(404).end());
  attachAgentSocket(server, core, {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  core.start();

  // Every outermost transaction, with the audit rows it wrote.
  const commits: string[][] = [];
  let counting = false;
  const write = core.store.write.bind(core.store);
  const lastAudit = core.db.prepare<[], { id: number }>('SELECT max(id) AS id FROM audit');
  const auditSince = core.db.prepare<[number], { type: string }>('SELECT type FROM audit WHERE id > ? ORDER BY id');
  core.store.write = (<T>(fn: () => T): T => {
    if (!counting || core.db.inTransaction) return write(fn);
    const before = lastAudit.get()!.id ?? 0;
    const v = write(fn);
    commits.push(auditSince.all(before).map((r) => r.type));
    return v;
  }) as typeof core.store.write;

  // The stack at the write that marks the attempt out, and at ws.send of the trigger.
  let dispatchStack: Frame[] | undefined;
  let sendStack: Frame[] | undefined;
  const origSend = WebSocket.prototype.send;
  WebSocket.prototype.send = function (this: WebSocket, data: unknown, ...rest: unknown[]) {
    if (typeof data === 'string' && data.includes('"job_trigger"') && !sendStack) sendStack = framesOf(new Error().stack!);
    return (origSend as (...a: unknown[]) => void).call(this, data, ...rest);
  } as typeof WebSocket.prototype.send;
  const append = core.audit.append.bind(core.audit);
  core.audit.append = ((row: Parameters<typeof append>[0]) => {
    if (row.type === 'run.dispatch' && !dispatchStack) dispatchStack = framesOf(new Error().stack!);
    return append(row);
  }) as typeof core.audit.append;

  const token = core.tokens.create({ name: 'route', role: 'route', actor: 'bench' }).token;
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` }, perMessageDeflate: false });
  let seq = 0;
  const replies = new Map<number, (m: { ok: boolean }) => void>();
  const request = (f: Record<string, unknown>) =>
    new Promise<{ ok: boolean }>((resolve) => {
      const id = ++seq;
      replies.set(id, resolve);
      ws.send(JSON.stringify({ id, ...f }));
    });
  let gotTrigger: (runId: string) => void;
  const triggered = new Promise<string>((r) => (gotTrigger = r));
  ws.on('message', (data) => {
    const m = JSON.parse(data.toString()) as { id?: number; ok?: boolean; type?: string; runId?: string };
    if (m.id !== undefined && replies.has(m.id)) {
      replies.get(m.id)!(m as { ok: boolean });
      replies.delete(m.id);
    } else if (m.type === 'job_trigger') gotTrigger(m.runId!);
  });
  await new Promise((r) => ws.once('open', r));
  await request({ type: 'hello', role: 'route', name: 'route' });
  core.jobs.create({ name: 'route', role: 'route', schedule: { cron: '0 1 * * *', timezone: 'UTC' }, overlap: 'allow' }, { actor: 'bench' });
  await core.jobs.settled();

  counting = true;
  clock.advanceTo(Date.parse('2026-11-30T01:00:00.000Z'));
  const runId = await triggered;
  await request({ type: 'run_started', runId });
  await request({ type: 'run_result', runId, outcome: 'success' });
  await new Promise((r) => setTimeout(r, 50));
  counting = false;

  WebSocket.prototype.send = origSend;
  ws.close();
  core.close();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));

  const toDispatch = fromTimer(dispatchStack ?? []);
  // The send itself (agent-socket.ts's arrow calling ws.send) is the last frame.
  const toSend = fromTimer(sendStack ?? []);
  const area = (f: Frame) => (f.file.includes('core/jobs/') ? 'jobs' : f.file.includes('core/hub/') ? 'hub' : 'other');
  let crossings = 0;
  for (let i = 1; i < toSend.length; i++) {
    const a = area(toSend[i - 1]!);
    const b = area(toSend[i]!);
    if (a !== b && a !== 'other' && b !== 'other') crossings++;
    // A jobs → (context) → hub hop through a non-core frame still counts once.
  }
  const coreFiles = new Set(toSend.filter((f) => f.file.startsWith('src-main/core/')).map((f) => f.file));
  return {
    callsToDispatch: toDispatch.length,
    filesToDispatch: new Set(toDispatch.map((f) => f.file)).size,
    callsToSend: toSend.length,
    coreFilesToSend: coreFiles.size,
    crossings,
    transactions: commits.filter((c) => c.length > 0).length,
    stackToSend: toSend.map((f) => `${f.file}: ${f.fn}`),
    commits: commits.filter((c) => c.length > 0),
  };
}

export function printTriggerRoute(r: RouteFigures): void {
  console.log('\n## The route of one trigger (runtime stack, timer callback → ws.send of job_trigger)\n');
  for (const line of r.stackToSend) console.log(`    ${line}`);
  console.log('\nTransactions from the due instant to the run_result reply (audit rows each wrote):');
  r.commits.forEach((c, i) => console.log(`    ${i + 1}. ${c.join(', ')}`));
  printTable('Route figures', [
    { what: 'timer → the write marking the attempt out', calls: r.callsToDispatch, files: r.filesToDispatch, 'jobs↔hub crossings': '' },
    { what: 'timer → ws.send of job_trigger (core files)', calls: r.callsToSend, files: r.coreFilesToSend, 'jobs↔hub crossings': r.crossings },
    { what: 'transactions per trigger (timer → result)', calls: r.transactions, files: '', 'jobs↔hub crossings': '' },
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  printTriggerRoute(await measureTriggerRoute());
  process.exit(0);
}
