import { ManualClock } from '../src-main/common/clock';
import { createCore } from '../src-main/core/create-core';
import { benchDir } from '../bench/util';
const clock = new ManualClock('2026-11-30T00:00:05.000Z');
const core = createCore({ clock, dataDir: benchDir('prof') });
core.start();
// fake an online instance so the 'instance' check passes
(core.hub as any).connectedInstances = () => ['x'];
(core.hub as any).pushJobTrigger = () => new Promise(() => {});
for (let i = 0; i < 1000; i++) core.jobs.create({ name: `job-${i}`, role: 'bench', schedule: { everyS: 10 }, missedWindow: 'skip_and_alert', retry: { maxAttempts: 1 }, overlap: 'allow' }, { actor: 'bench' });
const r: any = core.jobs.runner;
for (const m of ['advanceJob', 'evaluateDue', 'dispatch', 'execution', 'check', 'pass', 'flushOutbox', 'arm']) {
  const orig = r[m].bind(r); let total = 0; let n = 0;
  r[m] = (...a: any[]) => { const t = performance.now(); try { return orig(...a); } finally { total += performance.now() - t; n++; } };
  (r as any)[`__${m}`] = () => [total, n];
}
for (let k = 0; k < 3; k++) {
  const t0 = performance.now();
  clock.advance(10_000);
  console.log('advance', (performance.now() - t0).toFixed(1), 'ms');
}
for (const m of ['advanceJob', 'evaluateDue', 'dispatch', 'execution', 'check', 'pass', 'flushOutbox', 'arm']) console.log(m, r[`__${m}`]().map((x: number) => x.toFixed(1)));
core.close();
