#!/usr/bin/env node
/**
 * Splits another session's waits for a CPU by what ran on that CPU meanwhile, from the `perf record`
 * files bench/export-main-thread.ts writes with EXPORT_PERF=DIR (and EXPORT_PROBE=1):
 *   node bench/export-sched-wait.mjs DIR
 * For every wake-up of the probe (sched_waking of its pid) until it is switched in (sched_switch to
 * it), the wait, and the time within it that the CPU whose queue it stood on (its waking's target,
 * then where sched_migrate_task moved it) was running the export's worker thread(s) (the exporting
 * process's threads at nice 10), that process's main thread, or anything else (other processes: the
 * machine's load).
 * Per file: wake-ups, wait p50 / p99 / max and sum, and the sum's split. Scheduler events, not the
 * wall clock of a bench: what the worker itself cost the probe, whatever else the machine runs.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
if (!dir) {
  console.error('usage: node bench/export-sched-wait.mjs DIR');
  process.exit(2);
}
const pct = (xs, q) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor((q / 100) * xs.length))] : 0);
const rows = [];
for (const f of fs.readdirSync(dir).filter((x) => x.endsWith('.data')).sort((a, b) => parseInt(a) - parseInt(b))) {
  const meta = JSON.parse(fs.readFileSync(path.join(dir, f.replace(/\.data$/, '.json')), 'utf8'));
  const workers = new Set(meta.workers);
  const own = new Set(meta.threads ?? []);
  const r = spawnSync('perf', ['script', '-i', path.join(dir, f), '-F', 'pid,tid,cpu,time,event,trace'], { encoding: 'utf8', maxBuffer: 2 ** 30 });
  // A switch's line carries the process and thread of the task switched out: every thread of the
  // exporting process that ran is found, and those at nice 10 (prio 130) are its workers (the
  // export's, the log's), whatever ids were sampled beside the recording.
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*(\d+)\/(\d+)\s.*sched:sched_switch: .*prev_prio=(\d+)/.exec(line);
    if (!m || Number(m[1]) !== meta.main) continue;
    own.add(Number(m[2]));
    if (m[3] === '130') workers.add(Number(m[2]));
  }
  /** Per CPU: what runs since when, and the last ~second of it. */
  const cur = new Map();
  const hist = new Map();
  let pendingSince;
  /** The probe's queue while it waits: [cpu, since] segments. */
  let segs = [];
  const waits = [];
  const split = { worker: 0, main: 0, ownOther: 0, others: 0, idle: 0 };
  /** Per wake-up: the time the worker held the probe's CPU while it waited. */
  const behindWorker = [];
  const kind = (pid) => (pid === 0 ? 'idle' : workers.has(pid) ? 'worker' : pid === meta.main ? 'main' : own.has(pid) ? 'ownOther' : 'others');
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*\d+\/\d+\s+\[(\d+)\]\s+([\d.]+):\s+sched:(sched_waking|sched_switch|sched_migrate_task):\s+(.*)$/.exec(line);
    if (!m) continue;
    const cpu = Number(m[1]);
    const t = Number(m[2]) * 1e3; // ms
    if (m[3] === 'sched_waking') {
      const pid = Number(/ pid=(\d+)/.exec(m[4])?.[1]);
      if (pid === meta.probe && pendingSince === undefined) {
        pendingSince = t;
        segs = [[Number(/target_cpu=(\d+)/.exec(m[4])?.[1]), t]];
      }
      continue;
    }
    if (m[3] === 'sched_migrate_task') {
      const pid = Number(/ pid=(\d+)/.exec(m[4])?.[1]);
      if (pid === meta.probe && pendingSince !== undefined) segs.push([Number(/dest_cpu=(\d+)/.exec(m[4])?.[1]), t]);
      continue;
    }
    const next = Number(/next_pid=(\d+)/.exec(m[4])?.[1]);
    const h = hist.get(cpu) ?? [];
    h.push([t, next]);
    while (h.length > 2 && h[1][0] < t - 2000) h.shift();
    hist.set(cpu, h);
    cur.set(cpu, next);
    if (next === meta.probe && pendingSince !== undefined) {
      const w = t - pendingSince;
      waits.push(w);
      // What ran on the CPU of the probe's queue, segment by segment, from the wake-up to now.
      const w0 = split.worker;
      segs.forEach(([qcpu, from], k) => {
        const to = k + 1 < segs.length ? segs[k + 1][1] : t;
        const qh = hist.get(qcpu) ?? [];
        for (let i = qh.length - 1; i >= 0; i--) {
          const start = Math.max(qh[i][0], from);
          const end = Math.min(i + 1 < qh.length ? qh[i + 1][0] : t, to);
          if (end <= from) break;
          if (end > start) split[kind(qh[i][1])] += end - start;
        }
      });
      behindWorker.push(split.worker - w0);
      pendingSince = undefined;
    }
  }
  behindWorker.sort((a, b) => a - b);
  waits.sort((a, b) => a - b);
  const sum = waits.reduce((a, b) => a + b, 0);
  rows.push(
    `${f}: ${meta.mode}, load ${meta.load.toFixed(1)}: ${waits.length} wake-ups, wait p50 ${pct(waits, 50).toFixed(3)} p99 ${pct(waits, 99).toFixed(2)} max ${(waits.at(-1) ?? 0).toFixed(1)} ms, sum ${sum.toFixed(0)} ms: ` +
      `the export worker on that CPU ${split.worker.toFixed(1)} ms (per wake-up p99 ${pct(behindWorker, 99).toFixed(2)}, max ${(behindWorker.at(-1) ?? 0).toFixed(1)}, ${behindWorker.filter((x) => x > 1).length} over 1 ms), the exporter's main thread ${split.main.toFixed(1)}, its other threads ${split.ownOther.toFixed(1)}, other processes ${split.others.toFixed(0)}, idle ${split.idle.toFixed(1)}`,
  );
}
console.log(rows.join('\n'));
