/**
 * Issue 29: what pricing and the cap checks cost per `usage` frame, in process (no socket): the
 * price table lookup, the ledger insert with the attempt's running total, and the caps (a per-task
 * cap, a daily cap of the role, a 5-hour window) — the work the hub's group commit does per frame.
 *
 *   npx tsx bench/spend.ts
 */
import { performance } from 'node:perf_hooks';
import { createCore } from '../src-main/core/create-core';
import { UsageLedger } from '../src-main/core/logs/usage-store';
import { benchDir, percentile, printTable } from './util';

const FRAMES = Number(process.env.SPEND_BENCH_FRAMES ?? 20_000);

export async function runSpendBench(): Promise<Record<string, number>> {
  const core = createCore({ dataDir: benchDir('spend') });
  try {
    core.budgets.put({ perRoleDailyUsd: { dev: 1e6 }, windows: [{ scope: 'role', role: 'dev', hours: 5, maxTokens: 1e13 }, { scope: 'global', hours: 168, maxCostUsd: 1e6 }], actor: 'bench' });
    const task = core.tasks.create({ title: 'capped', role: 'dev', budget: { maxCostUsdPerRun: 1e6 } }, { actor: 'bench' }).task;
    const ledger = new UsageLedger(core.db);
    const price = () => core.prices.price('claude-sonnet-4-5-20250929', { inputTokens: 1200, cacheReadTokens: 800, outputTokens: 80 });
    // 1. Pricing alone.
    let sink = 0;
    const t0 = performance.now();
    for (let i = 0; i < FRAMES * 10; i++) sink += price() ?? 0;
    const priceNs = ((performance.now() - t0) * 1e6) / (FRAMES * 10);
    // 2. The whole per-frame work, as core/logs does it inside the group commit: price, ledger row +
    // running total, caps. 100 frames share a transaction (one fsync), as a burst of frames does.
    const times: number[] = [];
    const frame = () => {
      const cost = price();
      const added = ledger.record({ subject: `task:${task.id}`, attempt: 1, role: 'dev', jobId: null, instanceId: 'inst', model: 'claude-sonnet-4-5', inputTokens: 1200, cacheReadTokens: 800, outputTokens: 80, costUsd: cost, estimated: true, at: core.clock.now() });
      core.budgets.usageRecorded({ subject: `task:${task.id}`, attempt: 1, role: 'dev', costNusd: added.costNusd, tokens: added.tokens, at: core.clock.now(), attemptTotals: added.totals });
    };
    for (let i = 0; i < FRAMES / 100; i++) {
      core.store.write(() => {
        for (let k = 0; k < 100; k++) {
          const s = performance.now();
          frame();
          times.push(performance.now() - s);
        }
      });
    }
    times.sort((a, b) => a - b);
    const result = { priceNs: Math.round(priceNs), frameP50Us: Math.round(percentile(times, 50) * 1000), frameP99Us: Math.round(percentile(times, 99) * 1000) };
    printTable('Spend: pricing and cap checks per usage frame (in process, CPU per frame inside the group commit; the commit’s fsync is shared and not counted)', [
      { what: 'price table lookup + cost', value: `${result.priceNs} ns` },
      { what: 'frame: price + ledger row + running total + per-task cap + daily cap + 2 windows, p50', value: `${result.frameP50Us} µs` },
      { what: 'same, p99', value: `${result.frameP99Us} µs` },
    ]);
    if (sink < 0) console.log(sink);
    return result;
  } finally {
    core.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSpendBench();
