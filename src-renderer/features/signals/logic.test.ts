import { describe, expect, it } from 'vitest';
import type { JobSummary } from '../../../src-main/common/job-schema';
import { filterSignals, signalWaiters, validateSetSignal } from './logic';

const job = (name: string, preconditions: unknown[]) => ({ id: `job_${name}`, name, preconditions }) as unknown as JobSummary;

describe('signals view logic', () => {
  it('finds the jobs that wait on each signal, with the key they ask for', () => {
    const w = signalWaiters([job('report', [{ kind: 'signal', name: 'data-ready' }, { kind: 'http', url: 'x' }]), job('weekly', [{ kind: 'signal', name: 'data-ready', key: '{isoWeek}' }])]);
    expect([...w.keys()]).toEqual(['data-ready']);
    expect(w.get('data-ready')).toEqual([
      { jobId: 'job_report', job: 'report', key: '{date}' },
      { jobId: 'job_weekly', job: 'weekly', key: '{isoWeek}' },
    ]);
  });

  it('filters by name, key or setter, newest key first within a name', () => {
    const s = (name: string, key: string, actor = 'operator:desktop') => ({ name, key, actor, setAt: '2026-12-01T00:00:00Z' });
    const items = [s('data-ready', '2026-11-30'), s('data-ready', '2026-12-01'), s('export-done', '2026-12-01', 'inst_etl')];
    expect(filterSignals(items, '').map((x) => `${x.name}/${x.key}`)).toEqual(['data-ready/2026-12-01', 'data-ready/2026-11-30', 'export-done/2026-12-01']);
    expect(filterSignals(items, 'ETL').map((x) => x.name)).toEqual(['export-done']);
  });

  it('checks the set-signal form at the field', () => {
    expect(validateSetSignal({ name: 'data-ready', key: '2026-12-01', value: '' })).toEqual({ ok: true, value: { name: 'data-ready', key: '2026-12-01' } });
    expect(validateSetSignal({ name: 'data-ready', key: '2026-12-01', value: '{"rows": 3}' })).toEqual({ ok: true, value: { name: 'data-ready', key: '2026-12-01', value: { rows: 3 } } });
    const bad = validateSetSignal({ name: 'a/b', key: '', value: '{' });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(Object.keys(bad.errors).sort()).toEqual(['key', 'name', 'value']);
  });
});
