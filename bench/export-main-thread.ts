/**
 * What an audit export costs the server's main thread (the one that serves claims), in process:
 *   EXPORT_ROWS=300000 EXPORT_ROUNDS=3 npx tsx bench/export-main-thread.ts
 * Seeds EXPORT_ROWS audit rows, then streams `GET /audit/export`'s way (the core's exporter, its
 * worker thread, `streamChunks` into a real HTTP response) to `curl` (its own process, output
 * discarded), EXPORT_ROUNDS times, and prints per export: the main thread's CPU per row, its GC
 * pauses (count, total, longest: PerformanceObserver 'gc'), and the event loop's delay p99 / max
 * (monitorEventLoopDelay: how long a claim arriving meanwhile could wait behind one task).
 * CPU, not wall time: meaningful on a loaded machine too. No fetch client in this process: its
 * own CPU and garbage would be counted as the server's.
 *
 * EXPORT_PAUSE=MS|both (default: the product's, EXPORT_WORKER_PAUSE_MS): the export worker's sleep
 * after each page; `both` alternates the worker as before pacing (pages of 200 rows, no pauses) and
 * the product's (EXPORT_WORKER_PAGE_ROWS, EXPORT_WORKER_PAUSE_MS) round by round. EXPORT_HOGS=N (default
 * 0): N busy loops, each a process in a session of its own at nice 0, run through the exports — a
 * machine whose CPUs are all wanted: what the export's throughput falls to (bench/REPORT.md "export3").
 * EXPORT_PROBE=1: a process in a session of its own (as an agent is) sleeps 2 ms and wakes, over and
 * over, during each export, and its wake-up lateness (p50 / p99 / max, ms) is printed: how long a
 * thread of another session that wakes waits for a CPU beside the export.
 * EXPORT_PERF=DIR (with EXPORT_PROBE): for 3 s of each export, `perf record` of the machine's
 * scheduler events (sched_waking, sched_switch, sched_migrate_task) into DIR/<round>-<mode>.data, with the probe's pid and
 * the worker's thread ids beside it (.json); `node bench/export-sched-wait.mjs DIR` then splits each
 * of the probe's waits for a CPU by what ran on that CPU meanwhile.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createCore } from '../src-main/core/create-core';
import { AuditExporter, EXPORT_WORKER_PAGE_ROWS, EXPORT_WORKER_PAUSE_MS } from '../src-main/core/audit/export-thread';
import { EXPORT_PAGE_ROWS } from '../src-main/core/audit/audit-export';
import { streamChunks } from '../src-main/server/api/router';
import { seedDatabase } from '../e2e/seed';

const ROWS = Number(process.env.EXPORT_ROWS ?? 300_000);
const ROUNDS = Number(process.env.EXPORT_ROUNDS ?? 3);
const PAUSE = process.env.EXPORT_PAUSE ?? String(EXPORT_WORKER_PAUSE_MS);
const HOGS = Number(process.env.EXPORT_HOGS ?? 0);
const PROBE = process.env.EXPORT_PROBE === '1';
/** The wake-up probe (EXPORT_PROBE): on 'start' it samples, on 'stop' it sends the lateness, ms, sorted. */
const PROBE_SRC = `
let on = false; let late = [];
const tick = () => { const t = performance.now(); setTimeout(() => { if (on) late.push(performance.now() - t - 2); setImmediate(tick); }, 2); };
process.on('message', (m) => { if (m === 'start') { late = []; on = true; } else if (m === 'stop') { on = false; process.send(late.sort((a, b) => a - b)); } else process.exit(0); });
tick();`;

/** This process's main thread's CPU, µs (Linux: its task's utime + stime, in 10 ms ticks). */
function mainThreadCpuUs(): number {
  const f = fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) * 1e4;
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-export-main-'));
  const core = (() => {
    seedDatabase(dir, { auditRows: ROWS, tasks: 0, expiredToday: 0 });
    return createCore({ dataDir: dir });
  })();
  let pauseMs = PAUSE === 'both' ? 0 : Number(PAUSE);
  const exporter = () => new AuditExporter(core.auditQuery, { dbPath: path.join(dir, 'gaffer.db'), pauseMs, pageRows: pauseMs ? EXPORT_WORKER_PAGE_ROWS : EXPORT_PAGE_ROWS });
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    void streamChunks(res, exporter().stream({}, { format: 'jsonl' }));
  });
  const probe = PROBE ? spawn(process.execPath, ['-e', PROBE_SRC], { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }) : undefined;
  const hogs = Array.from({ length: HOGS }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { detached: true, stdio: 'ignore' }));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const gcs: number[] = [];
  let major = 0;
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gcs.push(e.duration);
      if ((e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) major++;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      if (PAUSE === 'both') pauseMs = round % 2 === 0 ? EXPORT_WORKER_PAUSE_MS : 0;
      gcs.length = 0;
      major = 0;
      probe?.send('start');
      const perfDir = process.env.EXPORT_PERF;
      let perf: Promise<void> | undefined;
      if (perfDir && probe) {
        fs.mkdirSync(perfDir, { recursive: true });
        const tag = `${round}-pause${pauseMs}`;
        perf = new Promise<void>((resolve) => {
          setTimeout(() => {
            // The worker's thread ids, at the start and at the end of the recording (a worker from the sources can take a second to start).
            const niced = () =>
              fs.readdirSync(`/proc/${process.pid}/task`).filter((t) => {
                try {
                  const st = fs.readFileSync(`/proc/${process.pid}/task/${t}/stat`, 'utf8');
                  return st.slice(st.lastIndexOf(')') + 2).split(' ')[16] === '10';
                } catch {
                  return false;
                }
              });
            const workers = new Set(niced());
            const load = os.loadavg()[0];
            const p = spawn('perf', ['record', '-q', '-e', 'sched:sched_waking', '-e', 'sched:sched_switch', '-e', 'sched:sched_migrate_task', '-a', '-o', path.join(perfDir, `${tag}.data`), '--', 'sleep', '3'], { stdio: 'ignore' });
            const done = () => {
              for (const t of niced()) workers.add(t);
              fs.writeFileSync(path.join(perfDir, `${tag}.json`), JSON.stringify({ probe: probe.pid, main: process.pid, workers: [...workers].map(Number), threads: fs.readdirSync(`/proc/${process.pid}/task`).map(Number), mode: `pause ${pauseMs} ms`, load }));
              resolve();
            };
            p.on('exit', done);
            p.on('error', done);
          }, 1000);
        });
      }
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      const cpu0 = mainThreadCpuUs();
      const t0 = performance.now();
      const bytes = await new Promise<number>((resolve, reject) => {
        const curl = spawn('curl', ['-s', '-o', '/dev/null', '-w', '%{size_download}', url], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        curl.stdout.on('data', (d) => (out += String(d)));
        curl.on('error', reject);
        curl.on('exit', (code) => (code === 0 ? resolve(Number(out)) : reject(new Error(`curl exited with ${code}`))));
      });
      const s = (performance.now() - t0) / 1000;
      await perf;
      const late = probe ? await new Promise<number[]>((r) => (probe.once('message', (m) => r(m as number[])), probe.send('stop'))) : [];
      const at = (q: number) => late[Math.min(late.length - 1, Math.floor((q / 100) * late.length))] ?? 0;
      const cpuUs = mainThreadCpuUs() - cpu0;
      h.disable();
      await new Promise((r) => setTimeout(r, 50)); // the observer's last entries
      const gcMs = gcs.reduce((a, b) => a + b, 0);
      console.log(
        `export ${round}${PAUSE === 'both' ? ` (pause ${pauseMs} ms)` : ''}${HOGS ? `, ${HOGS} busy loop(s) beside it` : ''}: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${s.toFixed(1)} s (${Math.round(ROWS / s).toLocaleString('en')} rows/s); ` +
          `main thread ${(cpuUs / ROWS).toFixed(2)} µs CPU per row; GC ${gcs.length} pauses (${major} major), ${gcMs.toFixed(0)} ms, longest ${Math.max(0, ...gcs).toFixed(1)} ms; ` +
          `event loop delay p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms; ${probe ? `another session's wake-up late p50 / p99 / max ${at(50).toFixed(2)} / ${at(99).toFixed(2)} / ${at(100).toFixed(1)} ms (${late.length}); ` : ''}load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    obs.disconnect();
    for (const h of hogs) h.kill('SIGKILL');
    probe?.kill('SIGKILL');
    server.close();
    core.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
