// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsoleKit } from '../../testing/console-kit';
import { emptyJobForm, validateForm } from './form';
import { useSlotPreview } from './use-slot-preview';

let kit: ConsoleKit;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  kit = new ConsoleKit();
});
afterEach(() => {
  vi.useRealTimers();
  kit.dispose();
});

const specOf = (p: Partial<ReturnType<typeof emptyJobForm>>) => validateForm({ ...emptyJobForm('UTC'), name: 'daily', role: 'reporter', ...p }).spec;
/** Lets the debounce run out and the answer arrive. */
const wait = (ms = 400) => act(async () => vi.advanceTimersByTimeAsync(ms));

describe('useSlotPreview', () => {
  it('previews the unsaved schedule once it stands still; an older answer stays, marked stale, until the new one', async () => {
    const previewJob = (args: Parameters<ConsoleKit['call']>[1]) => kit.call('jobs.preview', args as never);
    const { result, rerender } = renderHook(({ spec }) => useSlotPreview(spec, previewJob), { initialProps: { spec: specOf({ cron: '0 9 * * *' }) } });
    expect(result.current).toMatchObject({ loading: true, result: null, stale: false });
    await wait();
    expect(result.current.loading).toBe(false);
    expect(result.current.result!.items).toHaveLength(10);
    expect(result.current.result!.items[0]!.slot).toBe('2026-12-01');
    rerender({ spec: specOf({ cron: '30 18 * * *' }) });
    expect(result.current).toMatchObject({ loading: true, stale: true });
    expect(result.current.result!.items[0]!.slot).toBe('2026-12-01');
    await wait();
    expect(result.current).toMatchObject({ loading: false, stale: false });
    expect(result.current.result!.items[0]!.at).toBe('2026-11-30T18:30:00.000Z');
    expect(kit.countCalls('jobs.preview')).toBe(2);
  });

  it('a change that does not move slots (a retry policy) leaves the slots shown current', async () => {
    const previewJob = (args: Parameters<ConsoleKit['call']>[1]) => kit.call('jobs.preview', args as never);
    const { result, rerender } = renderHook(({ spec }) => useSlotPreview(spec, previewJob), { initialProps: { spec: specOf({}) } });
    await wait();
    rerender({ spec: specOf({ retryMaxAttempts: '5' }) });
    expect(result.current.stale).toBe(false);
    rerender({ spec: specOf({ windowOn: true, windowStart: '09:00', windowEnd: '09:30' }) });
    expect(result.current.stale).toBe(true);
  });

  it('a refused preview shows the reason', async () => {
    const previewJob = (args: Parameters<ConsoleKit['call']>[1]) => kit.call('jobs.preview', args as never);
    const { result } = renderHook(() => useSlotPreview(specOf({ cron: '61 9 * * *' }), previewJob));
    await wait();
    expect(result.current.error?.code ?? result.current.result?.issues.map((i) => i.field).join()).toMatch(/bad_request|schedule\.cron/);
  });
});
