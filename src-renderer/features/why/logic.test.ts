import { describe, expect, it } from 'vitest';
import type { Explanation, Run } from '../../../src-main/common/job-schema';
import { instantOf, layersOf, quickPicks, verdictOf } from './logic';

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
