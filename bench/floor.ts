/**
 * The SQL floor: what the statements of a claim and a report cost on their own — the same
 * prepared statements the core runs (task repo + an audit row with its SHA-256 chain hash), in the
 * same schema, with none of the application around them (validation, Task objects, events, the
 * store's savepoints). It shows what these statements cost on this disk before any application
 * code runs, i.e. how close the core can come to the bare pair with this schema:
 *  - single-op: one durable transaction per claim and per report, against two bare single-row
 *    FULL transactions (the core bench's ratio), alternating rounds on the same disk;
 *  - batched: 34 claims + 34 reports per transaction (what group commit gives the hub at 50
 *    agents), server CPU per task.
 * Run: npm run bench -- floor   (or: npx tsx bench/floor.ts)
 */
import { fileURLToPath } from 'node:url';
import { createCore } from '../src-main/core/create-core';
import { GENESIS_HASH, rowHash } from '../src-main/core/audit/hash-chain';
import { prepareTaskRepo } from '../src-main/core/tasks/task-repo';
import { benchDir, median, openBare, printTable, seedBacklog } from './util';

const PAIRS = 500;
const ROUNDS = 12;
const BATCH = 34;

export async function runFloorBench(): Promise<Record<string, number>> {
  const dir = benchDir('floor');
  const core = createCore({ dataDir: dir });
  const db = core.db;
  seedBacklog(db, 200_000);
  const inst = core.instances.register({ role: 'dev', name: 'floor' }).id;
  const repo = prepareTaskRepo(db);
  const insertAudit = db.prepare('INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)');
  // From here on only these statements write (the core's API is not used again).
  let last = db.prepare<[], { id: number; hash: string }>('SELECT id, hash FROM audit ORDER BY id DESC LIMIT 1').get() ?? { id: 0, hash: GENESIS_HASH };
  const audit = (type: string, subject: string, detail: string, traceId: string | null) => {
    const row = { id: last.id + 1, at: Date.now(), type, actor: inst, subject, detail, traceId, prevHash: last.hash };
    const hash = rowHash(row);
    insertAudit.run(row.id, row.at, type, inst, subject, detail, row.traceId, row.prevHash, hash);
    last = { id: row.id, hash };
  };
  // No instance row read: the core's claim keeps the claiming instance's status per store epoch.
  const claim = (): number => {
    const c = repo.nextClaimable.get('dev')!;
    const t = Date.now();
    repo.insertLock.run(c.id, inst, c.fence + 1, t, t + 7_200_000);
    repo.markClaimed.run(c.fence + 1, inst, t, t, c.id);
    audit('lock.claim', `task:${c.id}`, JSON.stringify({ fence: c.fence + 1, attempt: c.attempt + 1, expiresAt: new Date(t + 7_200_000).toISOString(), previouslyExpired: false, role: 'dev' }), c.trace_id);
    return c.id;
  };
  const report = (id: number) => {
    const r = repo.row.get(id)!;
    repo.deleteLock.run(id);
    repo.setReported.run('done', null, null, Date.now(), id);
    audit('lock.release', `task:${id}`, JSON.stringify({ fence: r.fence, from: 'in_progress', to: 'done' }), r.trace_id);
  };

  // Single-op, alternating with the bare pair.
  const bare = openBare(dir);
  const claimTx = db.transaction(claim);
  const reportTx = db.transaction(report);
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const bareRate = bare.run(PAIRS);
    const t0 = performance.now();
    for (let i = 0; i < PAIRS; i++) reportTx(claimTx.immediate());
    ratios.push(PAIRS / ((performance.now() - t0) / 1000) / bareRate);
  }
  bare.close();

  // Batched, as group commit applies them.
  const batchTx = db.transaction(() => {
    const ids: number[] = [];
    for (let k = 0; k < BATCH; k++) ids.push(claim());
    for (const id of ids) report(id);
  });
  const usPerTask: number[] = [];
  for (let r = 0; r < 3; r++) {
    const cpu0 = process.cpuUsage();
    for (let i = 0; i < 600; i++) batchTx.immediate();
    const cpu = process.cpuUsage(cpu0);
    usPerTask.push((cpu.user + cpu.system) / (600 * BATCH));
  }
  core.close();

  const figures = { singleVsBare: median(ratios), batchCpuUsPerTask: median(usPerTask) };
  printTable('SQL floor: the core’s claim + report statements alone (no application code), synchronous=FULL', [
    { shape: `one transaction per claim and per report (${ROUNDS} rounds of ${PAIRS} pairs, alternating with the bare pair)`, figure: `${(figures.singleVsBare * 100).toFixed(0)} % of two bare FULL transactions` },
    { shape: `${BATCH} claims + ${BATCH} reports per transaction (group commit at 50 agents)`, figure: `${figures.batchCpuUsPerTask.toFixed(1)} µs CPU per task` },
  ]);
  return figures;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await runFloorBench();
