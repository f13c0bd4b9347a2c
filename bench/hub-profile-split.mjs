#!/usr/bin/env node
/**
 * The hub profile's busy time (bench/hub-profile.ts with PROFILE=…) split into where it goes:
 *
 *   node bench/hub-profile-split.mjs <file.cpuprofile> [--tasks N]
 *
 * Each sample goes to one bucket, decided by its stack:
 *   gc            (garbage collector)
 *   sql native    a native leaf called from better-sqlite3 (run/get/all/iterate/exec…): the statements
 *   audit append  JavaScript under core/audit (the row's hash, its JSON, the head record), not its SQL
 *   ws/net        `ws`, node's net/stream/events/timers internals and their native leaves (writev, read)
 *   frame         ours between the socket and the core: server/agent-socket, core/hub/{session,wire,
 *                 requests}, common/parse-agent-request and the zod schemas it runs
 *   core          the rest of ours (claim-locks, task repo, rows, group commit, events, budgets…)
 *   other         (program) and anything unclassified; the profiler's own samples are left out
 * `--tasks N` (the tasks done in the profile's window) adds µs per task.
 */
import { readCpuProfile } from './cpuprofile.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--tasks');
const tasks = at >= 0 ? Number(args.splice(at, 2)[1]) : 0;
const file = args[0];
if (!file) {
  console.error('usage: node bench/hub-profile-split.mjs <file.cpuprofile> [--tasks N]');
  process.exit(2);
}
const { profile: p, byId, parent } = readCpuProfile(file);

const OURS = /\/src-main\//;
const FRAME = /\/src-main\/(server\/agent-socket|core\/hub\/(session|wire|requests)|common\/(parse-agent-request|protocol|schemas))|\/zod\//;
const AUDIT = /\/src-main\/core\/audit\//;
const SQLITE = /better-sqlite3/;
const NET = /^node:(net|dgram|_http|internal\/(stream|streams|net|timers|process\/task_queues))|\/ws\/lib\//;
const SQL_LEAF = new Set(['run', 'get', 'all', 'iterate', 'exec', 'pluck', 'raw', 'prepare', 'bind', 'sqliteTransaction']);

function bucket(leaf) {
  const f = byId.get(leaf).callFrame;
  if (f.functionName === '(garbage collector)') return 'gc';
  if (f.functionName === '(idle)') return 'idle';
  if (f.functionName === '(program)' || f.functionName === '(root)') return 'other';
  if (f.url === 'node:inspector' || byId.get(parent.get(leaf))?.callFrame.url === 'node:inspector') return 'profiler';
  // The innermost frame that decides: ours, `ws`, or node's socket/stream machinery. Native leaves
  // and neutral helpers (node's crypto, buffer, events) belong to whoever called them.
  for (let x = leaf; x !== undefined; x = parent.get(x)) {
    const url = byId.get(x).callFrame.url;
    if (url === '') continue;
    if (SQLITE.test(url) || (x !== leaf && f.url === '' && SQL_LEAF.has(f.functionName) && OURS.test(url) && !AUDIT.test(url))) return 'sql native';
    if (AUDIT.test(url)) return f.url === '' && SQL_LEAF.has(f.functionName) ? 'sql native' : 'audit append';
    if (OURS.test(url)) return FRAME.test(url) ? 'frame' : 'core';
    if (NET.test(url)) return 'ws/net';
  }
  return 'other';
}

const sums = new Map();
let busy = 0;
for (let i = 0; i < p.samples.length; i++) {
  const b = bucket(p.samples[i]);
  const us = p.timeDeltas[i] ?? 0;
  sums.set(b, (sums.get(b) ?? 0) + us);
  if (b !== 'idle' && b !== 'profiler') busy += us;
}
console.log(`${file}: ${(busy / 1000).toFixed(0)} ms busy${tasks ? `, ${tasks} tasks` : ''}`);
for (const [k, us] of [...sums].filter(([k]) => k !== 'idle' && k !== 'profiler').sort((a, b) => b[1] - a[1])) {
  const perTask = tasks ? `  ${(us / tasks).toFixed(1).padStart(6)} µs/task` : '';
  console.log(`${k.padEnd(13)} ${(us / 1000).toFixed(0).padStart(6)} ms  ${((100 * us) / busy).toFixed(1).padStart(5)} %${perTask}`);
}

// `--detail BUCKET`: that bucket's functions by self time.
const di = process.argv.indexOf('--detail');
if (di >= 0) {
  const want = process.argv[di + 1];
  const self = new Map();
  for (let i = 0; i < p.samples.length; i++) {
    if (bucket(p.samples[i]) !== want) continue;
    const f = byId.get(p.samples[i]).callFrame;
    const k = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
    self.set(k, (self.get(k) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${(us / 1000).toFixed(1).padStart(8)}  ${k}`);
}
