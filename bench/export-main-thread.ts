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
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { createCore } from '../src-main/core/create-core';
import { streamChunks } from '../src-main/server/api/router';
import { seedDatabase } from '../e2e/seed';

const ROWS = Number(process.env.EXPORT_ROWS ?? 300_000);
const ROUNDS = Number(process.env.EXPORT_ROUNDS ?? 3);

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
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    void streamChunks(res, core.auditExport.stream({}, { format: 'jsonl' }));
  });
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
      gcs.length = 0;
      major = 0;
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
      const cpuUs = mainThreadCpuUs() - cpu0;
      h.disable();
      await new Promise((r) => setTimeout(r, 50)); // the observer's last entries
      const gcMs = gcs.reduce((a, b) => a + b, 0);
      console.log(
        `export ${round}: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${s.toFixed(1)} s (${Math.round(ROWS / s).toLocaleString('en')} rows/s); ` +
          `main thread ${(cpuUs / ROWS).toFixed(2)} µs CPU per row; GC ${gcs.length} pauses (${major} major), ${gcMs.toFixed(0)} ms, longest ${Math.max(0, ...gcs).toFixed(1)} ms; ` +
          `event loop delay p99 ${(h.percentile(99) / 1e6).toFixed(1)} ms, max ${(h.max / 1e6).toFixed(1)} ms; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    obs.disconnect();
    server.close();
    core.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
