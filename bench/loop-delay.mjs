/**
 * Preloaded (NODE_OPTIONS=--import) into a server a benchmark measures, when
 * GAFFER_BENCH_LOOP_DELAY_FILE is set: the main thread's event-loop delay (perf_hooks
 * monitorEventLoopDelay, 1 ms resolution) and utilisation. On SIGURG the figures since the last
 * SIGURG are written to that file as JSON ({p50Ms, p99Ms, maxMs, elu}) and the histogram restarts.
 * Used by bench/logs-gap.ts. Plain JavaScript so that any Node process of the start chain can load it.
 */
const file = process.env.GAFFER_BENCH_LOOP_DELAY_FILE;
if (file) {
  const { monitorEventLoopDelay, performance } = await import('node:perf_hooks');
  const fs = await import('node:fs');
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let elu = performance.eventLoopUtilization();
  process.on('SIGURG', () => {
    const ms = (ns) => ns / 1e6;
    const u = performance.eventLoopUtilization(elu);
    elu = performance.eventLoopUtilization();
    fs.writeFileSync(file, JSON.stringify({ p50Ms: ms(h.percentile(50)), p99Ms: ms(h.percentile(99)), maxMs: ms(h.max), elu: u.utilization }));
    h.reset();
  });
}
