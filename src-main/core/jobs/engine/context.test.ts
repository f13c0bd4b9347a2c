/** The engine's outbox: a push leaves only after the transaction that decided it committed. */
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../common/logger';
import type { Core } from '../../create-core';
import { BackfillRepo } from '../backfill-repo';
import { CalendarRepo } from '../calendar-repo';
import { startJobsHarness, succeed, type JobsHarness } from '../../tests/jobs.testkit';
import { JobRepo } from '../repo';
import { JobSettingsStore } from '../settings';
import { EngineContext } from './context';

let h: JobsHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function engineContext(c: Core): EngineContext {
  const repo = new JobRepo(c, new CalendarRepo(c.db));
  return new EngineContext({ ctx: c, repo, backfillRows: new BackfillRepo(c.db), settings: new JobSettingsStore(c), hub: c.hub, signals: c.signals, instances: c.instances, logger: silentLogger });
}

describe('outbox', () => {
  it('sends after the commit, and never what a failed (sub)transaction queued', async () => {
    h = await startJobsHarness({ startCore: false });
    const e = engineContext(h.core);
    const sent: string[] = [];
    e.write(() => {
      e.afterCommit(() => sent.push('committed'));
      expect(sent).toEqual([]);
    });
    expect(sent).toEqual(['committed']);
    expect(() =>
      e.write(() => {
        e.afterCommit(() => sent.push('rolled back'));
        throw new Error('boom');
      }),
    ).toThrow('boom');
    e.write(() => {
      e.afterCommit(() => sent.push('outer'));
      try {
        e.write(() => {
          e.afterCommit(() => sent.push('inner, rolled back'));
          throw new Error('inner');
        });
      } catch {
        // the savepoint is gone; the outer transaction goes on
      }
    });
    expect(sent).toEqual(['committed', 'outer']);
  });

  it('a pass that fails after a dispatch sends no trigger for the run it rolled back', async () => {
    h = await startJobsHarness({ start: '2026-11-30T00:00:30.000Z' });
    const agent = await h.agent('ops', succeed());
    for (const name of ['first', 'second']) h.createJob({ name, role: 'ops', schedule: { everyS: 300, timezone: 'UTC' } });
    // The second claim of the pass fails once (a full disk, say): the chunk's transaction rolls back
    // after the first slot was dispatched in it.
    const audit = h.core.audit;
    const append = audit.append.bind(audit);
    let claims = 0;
    audit.append = (input) => {
      if (input.type === 'run.claim' && ++claims === 2) throw new Error('disk full');
      return append(input);
    };
    // The failed pass is tried again 5 s later (runner.ts), and then both slots are claimed.
    await h.advanceTo('2026-11-30T00:05:10.000Z');
    await h.settle();
    const runIds = new Set((h.core.db.prepare('SELECT id FROM runs').all() as Array<{ id: string }>).map((r) => r.id));
    expect(runIds.size).toBe(2);
    expect(agent.triggers.map((t) => t.runId).sort()).toEqual([...runIds].sort());
  });
});
