import { describe, expect, it } from 'vitest';
import type { Explanation, Run } from '../../../src-main/common/job-schema';
import { blockingLayer, fixesFor, instantOf, layersOf, quickPicks, verdictOf } from './logic';

function explanation(p: Partial<Explanation> = {}): Explanation {
  const ready = { verdict: 'ready' as const, reason: 'ok', items: [] };
  return {
    jobId: 'job_1',
    job: 'daily-report',
    version: 2,
    at: '2026-11-30T01:00:00.000Z',
    now: '2026-11-30T08:00:00.000Z',
    tense: 'past',
    slot: { slot: '2026-11-30', at: '2026-11-30T01:00:00.000Z', local: '2026-11-30T09:00', disposition: 'due', opensAt: '', closesAt: '', window: { opensAt: '', closesAt: '', latestStart: '' } },
    nextSlot: null,
    outcome: '',
    summary: '',
    layers: { time: ready, preconditions: ready, execution: ready },
    run: null,
    steps: [],
    backfills: [],
    trail: [],
    jobState: { enabled: true, paused: null, killSwitch: { on: false, reason: null, by: null, at: null } },
    ...p,
  };
}
const run = (p: Partial<Run>) => ({ id: 'run_1', slot: '2026-11-30', status: 'success', disposition: 'ran', trigger: 'schedule', ...p }) as Run;

describe('why: the verdict', () => {
  it('keeps "did not run because not ready" apart from "ran and failed"', () => {
    const notReady = verdictOf(explanation({ run: run({ status: 'skipped', disposition: 'skipped_not_ready' }) }));
    const failed = verdictOf(explanation({ run: run({ status: 'failed', disposition: 'failed' }) }));
    expect(notReady).toMatchObject({ kind: 'not_ready', title: 'Did not run: not ready' });
    expect(notReady.note).toContain('Nothing failed');
    expect(failed).toMatchObject({ kind: 'ran_failed', title: 'Ran and failed' });
    expect(failed.note).toContain('not a readiness problem');
    expect(verdictOf(explanation({ run: run({ disposition: 'held', status: 'failed' }) })).title).toContain('held for review');
    expect(verdictOf(explanation({ run: run({}) })).kind).toBe('ran_ok');
    expect(verdictOf(explanation({ run: run({ status: 'skipped', disposition: 'skipped_paused' }) })).title).toBe('Did not run: paused');
  });

  it('says when the agent said done and Gaffer\'s checks said no, and when it is checking the work', () => {
    const lastError = 'verification failed: tests: exited with 1';
    const failed = verdictOf(explanation({ run: run({ status: 'failed', disposition: 'failed', lastError }) }));
    expect(failed).toMatchObject({ kind: 'ran_failed', title: 'Ran, but the work did not pass its checks' });
    expect(failed.note).toContain('agent said done');
    expect(verdictOf(explanation({ run: run({ status: 'failed', disposition: 'held', lastError }) })).title).toBe('Ran, but the work did not pass its checks — held for review');
    expect(verdictOf(explanation({ run: run({ status: 'pending', disposition: 'retry_scheduled', lastError }) })).title).toBe('The work did not pass its checks; a retry is scheduled');
    expect(verdictOf(explanation({ run: run({ status: 'pending', disposition: 'retry_scheduled', lastError: 'timeout' }) })).title).toBe('Failed an attempt; a retry is scheduled');
    expect(verdictOf(explanation({ run: run({ status: 'running', disposition: 'verifying' }) }))).toMatchObject({ kind: 'in_progress', title: 'Ran; Gaffer is checking the work' });
  });

  it('tells forecasts from past facts', () => {
    const paused = { at: '2026-11-30T07:00:00.000Z', by: 'operator:browser', reason: 'migration', until: null, drain: false, role: false };
    expect(verdictOf(explanation({ tense: 'future', jobState: { enabled: true, paused, killSwitch: { on: false, reason: null, by: null, at: null } } })).kind).toBe('will_not_run');
    expect(verdictOf(explanation({ tense: 'future' })).kind).toBe('will_run');
    expect(verdictOf(explanation({ tense: 'past' })).kind).toBe('no_record');
    expect(verdictOf(explanation({ slot: null })).kind).toBe('no_slot');
  });
});

describe('why: the four layers', () => {
  it('moves overlap and backfill order out of execution into layer 4, with the existing run', () => {
    const e = explanation({
      tense: 'future',
      layers: {
        time: { verdict: 'ready', reason: 'due', items: [] },
        preconditions: { verdict: 'will_check', reason: 'later', items: [] },
        execution: {
          verdict: 'not_ready',
          reason: 'pause: paused',
          items: [
            { name: 'pause', verdict: 'not_ready', reason: 'paused' },
            { name: 'overlap', verdict: 'ready', reason: 'no run in progress now' },
            { name: 'order', verdict: 'ready', reason: 'no queued backfill runs first' },
          ],
        },
      },
    });
    const l = layersOf(e);
    expect(l.map((x) => [x.step, x.key, x.verdict])).toEqual([
      [1, 'time', 'ready'],
      [2, 'preconditions', 'will_check'],
      [3, 'execution', 'not_ready'],
      [4, 'overlap', 'ready'],
    ]);
    expect(l[2]!.items.map((i) => i.name)).toEqual(['pause']);
    expect(l[3]!.items.map((i) => i.name)).toEqual(['overlap', 'order']);
    const withRun = layersOf(explanation({ run: run({ disposition: 'skipped_overlap', status: 'skipped' }) }));
    expect(withRun[3]).toMatchObject({ verdict: 'not_ready' });
    expect(withRun[3]!.reason).toContain('run run_1 exists for slot 2026-11-30');
  });
});

describe('why: the instant picker', () => {
  it('quick picks at the job’s usual time, in its zone', () => {
    const now = Date.parse('2026-11-30T20:00:00.000Z'); // 2026-12-01 04:00 in Shanghai
    const picks = quickPicks(now, 'Asia/Shanghai', '2026-12-01T01:00:00.000Z');
    expect(picks).toEqual([
      { id: 'yesterday', label: 'yesterday 09:00', local: '2026-11-30T09:00' },
      { id: 'now', label: 'now', local: '2026-12-01T04:00' },
      { id: 'tomorrow', label: 'tomorrow 09:00', local: '2026-12-02T09:00' },
      { id: 'next', label: 'next slot', local: '2026-12-01T09:00' },
    ]);
    expect(quickPicks(now, 'UTC', null).map((p) => p.label)).toEqual(['yesterday 09:00', 'now', 'tomorrow 09:00']);
    expect(instantOf('2026-11-30T09:00', 'Asia/Shanghai')).toBe('2026-11-30T01:00:00.000Z');
    expect(instantOf('', 'UTC')).toBeNull();
  });

});

describe('why: the blocking layer and the fixes at hand', () => {
  const notSet = { name: 'signal:data-ready', verdict: 'not_ready' as const, reason: 'signal data-ready is not set for 2026-12-01', evidence: { name: 'data-ready', key: '2026-12-01', setAt: null, actor: null } };
  it('leads with the first layer that did not pass, and the item that said so', () => {
    const e = explanation({ layers: { time: { verdict: 'ready', reason: 'ok', items: [] }, preconditions: { verdict: 'not_ready', reason: notSet.reason, items: [notSet] }, execution: { verdict: 'ready', reason: 'ok', items: [] } } });
    const b = blockingLayer(layersOf(e))!;
    expect(b.layer).toMatchObject({ key: 'preconditions', step: 2 });
    expect(b.item).toMatchObject({ name: 'signal:data-ready' });
    expect(blockingLayer(layersOf(explanation()))).toBeNull();
  });

  it('offers "set signal data-ready for 2026-12-01" for a missing signal, recorded or forecast, until the slot succeeded', () => {
    const pre = (items: unknown[]) => ({ verdict: 'not_ready' as const, reason: '', items: items as never });
    const recorded = explanation({ run: run({ status: 'skipped', disposition: 'skipped_not_ready' }), layers: { time: { verdict: 'ready', reason: '', items: [] }, preconditions: pre([notSet]), execution: { verdict: 'ready', reason: '', items: [] } } });
    expect(fixesFor(recorded)).toEqual([
      { kind: 'signal', name: 'data-ready', key: '2026-12-01' },
      { kind: 'backfill', slot: '2026-11-30' },
    ]);
    const forecast = explanation({ tense: 'future', layers: { time: { verdict: 'ready', reason: '', items: [] }, preconditions: pre([{ name: 'signal:data-ready', verdict: 'will_check', reason: '', evidence: { signal: 'data-ready', key: '2026-12-02', setNow: false } }]), execution: { verdict: 'ready', reason: '', items: [] } } });
    expect(fixesFor(forecast)).toEqual([{ kind: 'signal', name: 'data-ready', key: '2026-12-02' }]);
    const set = explanation({ tense: 'future', layers: { time: { verdict: 'ready', reason: '', items: [] }, preconditions: pre([{ name: 'signal:data-ready', verdict: 'will_check', reason: '', evidence: { signal: 'data-ready', key: '2026-12-02', setNow: true } }]), execution: { verdict: 'ready', reason: '', items: [] } } });
    expect(fixesFor(set)).toEqual([]);
    const ran = explanation({ run: run({}), layers: recorded.layers });
    expect(fixesFor(ran)).toEqual([]);
  });

  it('offers resume, kill switch off and enable from the job’s state; run now for a past slot nobody ran', () => {
    const stopped = explanation({ jobState: { enabled: false, paused: { at: '2026-11-30T00:00:00.000Z', by: 'operator:ann', reason: 'migration', until: null, drain: false, role: false }, killSwitch: { on: true, reason: 'incident', by: 'op', at: '2026-11-30T00:00:00.000Z' } } });
    expect(fixesFor(stopped).map((f) => f.kind)).toEqual(['killSwitchOff', 'resume', 'enable', 'runSlot']);
    const queued = explanation({ run: run({ status: 'failed', disposition: 'failed' }), backfills: [{ status: 'queued' } as never] });
    expect(fixesFor(queued)).toEqual([]);
    expect(fixesFor(explanation({ run: run({ status: 'skipped', disposition: 'skipped_calendar' }) }))).toEqual([]);
  });
});
