import { afterEach, describe, expect, it } from 'vitest';
import type { InboxItem } from '../../../src-main/common/attention';
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
