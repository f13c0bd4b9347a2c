// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobIssue } from '../../../src-main/common/job-schema';
import { ConsoleKit } from '../../testing/console-kit';
import { emptyJobForm, validateForm } from './form';
import { BACKGROUND_REHEARSAL_MS, useJobRehearsal } from './use-job-rehearsal';

let kit: ConsoleKit;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  kit = new ConsoleKit();
});
afterEach(() => {
  vi.useRealTimers();
  kit.dispose();
});

/** The rehearsal in flight (a throw-away world of the real engine, stepping on real immediates). */
let inFlight: Promise<unknown> = Promise.resolve();
/** Lets `ms` pass on the page's timers, then waits for the rehearsal asked meanwhile to answer. */
const wait = (ms: number) =>
  act(async () => {
    await vi.advanceTimersByTimeAsync(ms);
    await inFlight.catch(() => {});
  });
const spec = validateForm({ ...emptyJobForm('UTC'), name: 'daily', role: 'reporter' }).spec;

function rehearse(tab: 'settings' | 'rehearse', errors: JobIssue[] = []) {
  const rehearseJob = (args: { spec: Record<string, unknown> }) => {
    const p = kit.call('jobs.rehearse', args);
    inFlight = p;
    return p;
  };
  return renderHook(({ t, e }) => useJobRehearsal({ spec, errors: e, isNew: true, tab: t, rehearseJob }), { initialProps: { t: tab, e: errors } });
}

describe('useJobRehearsal', () => {
  it('on its tab: rehearses the settings once they stand still, and marks them seen', async () => {
    const { result } = rehearse('rehearse');
    expect(result.current).toMatchObject({ loading: true, rehearsedNow: false, seen: false });
    await wait(400);
    expect(result.current).toMatchObject({ loading: false, rehearsedNow: true, seen: true });
    expect(result.current.result!.scenarios.length).toBeGreaterThan(0);
    expect(kit.countCalls('jobs.rehearse')).toBe(1);
  });

  it('behind the settings tab it waits longer, is not "seen", and switching tabs alone asks nothing', async () => {
    const { result, rerender } = rehearse('settings');
    await wait(400);
    expect(kit.countCalls('jobs.rehearse')).toBe(0);
    await wait(BACKGROUND_REHEARSAL_MS);
    expect(result.current).toMatchObject({ rehearsedNow: true, seen: false });
    rerender({ t: 'rehearse', e: [] });
    await wait(400);
    expect(result.current.seen).toBe(true);
    expect(kit.countCalls('jobs.rehearse')).toBe(1);
    act(() => result.current.retry());
    await wait(400);
    expect(kit.countCalls('jobs.rehearse')).toBe(2);
  });

  it('settings with errors are not rehearsed (a new job\u2019s blank name and role do not count)', async () => {
    const blank: JobIssue[] = [{ field: 'name', message: 'required', severity: 'error' }];
    const { result, rerender } = rehearse('rehearse', blank);
    expect(result.current.rehearseSpec).not.toBeNull();
    rerender({ t: 'rehearse', e: [{ field: 'schedule.cron', message: 'bad', severity: 'error' }] });
    expect(result.current.rehearseSpec).toBeNull();
    await wait(2000);
    expect(kit.argsOf('jobs.rehearse')).toHaveLength(0);
  });
});
