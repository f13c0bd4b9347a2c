import { afterEach, describe, expect, it } from 'vitest';
import type { InboxItem } from '../../../src-main/common/attention';
import type { Run } from '../../../src-main/common/job-schema';
import { FakeConsoleApi, ManualTimers } from '../../testing/fake-console-api';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const item = (id: number, p: Partial<InboxItem> = {}): InboxItem => ({
  id,
  kind: 'needs_human',
  severity: 'critical',
  subject: `run:r${id}`,
  title: `item ${id}`,
  detail: 'd',
  at: `2026-11-30T09:00:0${id}.000Z`,
  lastAt: `2026-11-30T09:00:0${id}.000Z`,
  count: 1,
  state: 'open',
  snoozedUntil: null,
  ackedAt: null,
  ackedBy: null,
  note: null,
  resolvedAt: null,
  resolution: null,
  evidence: {},
  updatedAt: `2026-11-30T09:00:0${id}.000Z`,
  ...p,
});

let s: ConsoleStore | undefined;
afterEach(() => {
  s?.dispose();
  s = undefined;
});

function make() {
  const api = new FakeConsoleApi();
  api.inbox = [item(1), item(2, { kind: 'stuck_queue', severity: 'warning', subject: 'role:dev' }), item(3, { state: 'acked' })];
  const timers = new ManualTimers();
  s = createConsoleStore(api, { timers, now: timers.now, refreshIntervalMs: 0 });
  return { api, store: s, timers };
}

describe('inbox slice', () => {
  it('loads the open items with their counts, and the filter it was loaded for', async () => {
    const { store } = make();
    store.actions.watch('inbox');
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter).toEqual({ state: 'open', kind: null });
    expect(list.items.map((i) => i.id)).toEqual([2, 1]);
    expect(list.counts).toMatchObject({ open: 2, critical: 1 });
  });

  it('a slow answer for the previous filter is never shown as the new one', async () => {
    const { api, store } = make();
    store.actions.watch('inbox');
    await settle();
    const release = api.hold('inbox.list');
    store.actions.setInboxFilter({ state: 'acked' });
    await settle();
    // Still the open list: tagged with its own filter, so the view does not show it as "acknowledged".
    expect(store.store.getState().inboxList.data!.filter.state).toBe('open');
    release();
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter.state).toBe('acked');
    expect(list.items.map((i) => i.id)).toEqual([3]);
  });

  it('acknowledging refreshes the list and the dashboard (the rail badge); bulk reports skipped ones', async () => {
    const { api, store } = make();
    store.actions.watch('inbox');
    store.actions.watch('dashboard');
    await settle();
    expect(store.store.getState().dashboard.data!.inbox.open).toBe(2);
    await store.actions.acknowledge([1], 'called them');
    await settle();
    expect(api.calls.find((c) => c.method === 'inbox.ack')!.args).toEqual({ id: 1, note: 'called them' });
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([2]);
    expect(store.store.getState().dashboard.data!.inbox.open).toBe(1);
    await store.actions.acknowledge([1, 2], null);
    await settle();
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ title: 'Acknowledged 1 item', body: '1 had been acknowledged already.' });
    expect(store.store.getState().inboxList.data!.items).toEqual([]);
  });

  it('a failed action says why and leaves the list as it was', async () => {
    const { api, store } = make();
    store.actions.watch('inbox');
    await settle();
    api.failNext('inbox.snooze', 'bad_request', 'invalid snooze at "until": it must be in the future');
    await expect(store.actions.snooze(1, '2020-01-01T00:00:00.000Z', null)).rejects.toBeTruthy();
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ title: 'Could not snooze the item', tone: 'error' });
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([2, 1]);
  });

  it('an inbox.changed event refreshes a watched inbox', async () => {
    const { api, store, timers } = make();
    store.actions.watch('inbox');
    store.actions.start();
    await settle();
    api.inbox.push(item(4, { lastAt: '2026-11-30T10:00:00.000Z' }));
    api.emit({ type: 'inbox.changed', itemId: 4, action: 'raised', kind: 'needs_human', severity: 'critical', state: 'open', title: 'item 4', detail: 'd' });
    timers.advance(1000);
    await settle();
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([4, 2, 1]);
  });
});

describe('never silent', () => {
  const failedRun = { id: 'run_9', jobId: 'job_qa', job: 'nightly-qa', slot: '2026-12-04', slotAt: '2026-12-04T02:00:00.000Z', status: 'failed', disposition: 'failed', held: false, version: 1 } as Run;

  it('a Resolved tab lists the items that resolved themselves', async () => {
    const { api, store } = make();
    api.inbox.push(item(5, { kind: 'run_failed', subject: 'job:job_qa', state: 'resolved', resolvedAt: '2026-11-30T10:00:00.000Z', resolution: 'nightly-qa: its run of 2026-12-04 succeeded' }));
    store.actions.watch('inbox');
    store.actions.setInboxFilter({ state: 'resolved' });
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter.state).toBe('resolved');
    expect(list.items.map((i) => i.id)).toEqual([5]);
  });

  it('a deep link brings one item into focus by id, whatever its state; it is refreshed with the inbox', async () => {
    const { api, store, timers } = make();
    store.actions.watch('inbox');
    store.actions.start();
    store.actions.focusInboxItem(3); // acknowledged: not in the open list
    await settle();
    expect(api.calls.filter((c) => c.method === 'inbox.get').map((c) => c.args)).toEqual([{ id: 3 }]);
    expect(store.store.getState().inboxFocus.data).toMatchObject({ id: 3, state: 'acked' });
    // The item resolves itself meanwhile: the focused copy follows the live event.
    api.inbox = api.inbox.map((i) => (i.id === 3 ? { ...i, state: 'resolved', resolution: 'the task moved on' } : i));
    api.emit({ type: 'inbox.changed', itemId: 3, action: 'resolved', kind: 'needs_human', severity: 'critical', state: 'resolved', title: 'item 3', detail: 'd' });
    timers.advance(1000);
    await settle();
    expect(store.store.getState().inboxFocus.data).toMatchObject({ id: 3, state: 'resolved', resolution: 'the task moved on' });
  });

  it('an answer for an item no longer in focus is dropped; an unknown item says not found', async () => {
    const { api, store } = make();
    const release = api.hold('inbox.get');
    store.actions.focusInboxItem(1);
    await settle();
    store.actions.focusInboxItem(99);
    release();
    await settle();
    const focus = store.store.getState().inboxFocus;
    expect(store.store.getState().inboxFocusId).toBe(99);
    expect(focus.data).toBeNull();
    expect(focus.error).toMatchObject({ code: 'not_found' });
    store.actions.focusInboxItem(null);
    expect(store.store.getState().inboxFocus).toMatchObject({ data: null, error: null });
  });

  it('Retry now retries the run, says so with a link to the run, and refreshes the runs and the inbox', async () => {
    const { api, store, timers } = make();
    api.runs.set(failedRun.id, failedRun);
    store.actions.watch('inbox');
    await settle();
    const before = api.countCalls('inbox.list');
    const r = await store.actions.retryRun({ id: 'run_9', job: 'nightly-qa', slot: '2026-12-04' });
    timers.advance(1000);
    await settle();
    expect(r.backfill).toMatchObject({ runId: 'run_9', status: 'dispatched' });
    expect(api.calls.find((c) => c.method === 'runs.retry')!.args).toEqual({ id: 'run_9' });
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ tone: 'success', title: 'Retrying nightly-qa 2026-12-04 now', link: { label: 'Open the run', view: 'runs', param: 'job_qa', query: { slot: '2026-12-04' } } });
    expect(api.countCalls('inbox.list')).toBeGreaterThan(before);
    // A toast with a link stays long enough to reach it (10 s, not 5).
    timers.advance(6000);
    expect(store.store.getState().toasts.some((t) => t.link)).toBe(true);
    timers.advance(4000);
    expect(store.store.getState().toasts.some((t) => t.link)).toBe(false);
  });

  it('a run that cannot be retried says why, and nothing changes', async () => {
    const { api, store } = make();
    api.runs.set('run_held', { ...failedRun, id: 'run_held', disposition: 'held', held: true });
    await expect(store.actions.retryRun({ id: 'run_held', job: 'nightly-qa', slot: '2026-12-04' })).rejects.toBeTruthy();
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ tone: 'error', title: 'Could not retry nightly-qa 2026-12-04', code: 'invalid_transition' });
  });

  it('saving a new webhook answers with its whole secret once; a later read masks it; a rotation answers with the new one', async () => {
    const { api, store } = make();
    store.actions.watch('notifications');
    await settle();
    const saved = await store.actions.saveNotifications({ webhooks: [{ url: 'https://ntfy.sh/very-secret-topic', format: 'ntfy' }] }, null);
    const secret = saved.webhooks[0]!.secret;
    expect(secret).toMatch(/^whsec_[^…]+$/);
    await settle();
    const view = store.store.getState().notifications.data!.settings;
    expect(view.webhooks[0]!.secret).toBe(`whsec_…${secret.slice(-4)}`);
    expect(view.webhooks[0]!.events).toContain('run_failed');
    const rotated = await store.actions.rotateWebhookSecret(view.webhooks[0]!.id);
    expect(rotated.secret).not.toBe(secret);
    await settle();
    expect(store.store.getState().notifications.data!.settings.webhooks[0]!.secret).toBe(`whsec_…${rotated.secret.slice(-4)}`);
    expect(api.countCalls('notifications.rotateSecret')).toBe(1);
  });
});
