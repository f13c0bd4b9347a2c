import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleKit, KitAgent } from '../../testing/console-kit';
import { createConsoleStore, type ConsoleStore } from '../console-store';

const settle = async (n = 8) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const OPERATOR = { actor: 'operator:browser' };

let made: Array<ConsoleStore | ConsoleKit> = [];
afterEach(() => {
  made.forEach((m) => m.dispose());
  made = [];
});

/**
 * A dev task its agent reported `blocked` (a "needs a human" item, critical) or `failed` (a
 * "task failed" item, a warning): one inbox item, raised by the core. A second passes after it.
 */
function reportedTask(api: ConsoleKit, title: string, status: 'blocked' | 'failed') {
  const { core } = api;
  const task = core.tasks.create({ title, role: 'dev' }, OPERATOR).task;
  const instanceId = core.instances.register({ role: 'dev', name: `agent-${title}` }).id;
  const claim = core.locks.claim({ instanceId });
  expect(claim.task?.id).toBe(task.id);
  core.locks.report({ instanceId, taskId: task.id, fence: claim.lock!.fence, status });
  const item = core.inbox.live(status === 'blocked' ? 'needs_human' : 'task_failed', `task:${task.id}`)!;
  api.timers.advance(1000);
  return { task, id: item.id };
}

/** Three items: 1 needs a human, 2 a failed task (both open), 3 a failed task snoozed for an hour. */
function make() {
  const api = new ConsoleKit();
  const i1 = reportedTask(api, 'item 1', 'blocked');
  const i2 = reportedTask(api, 'item 2', 'failed');
  const i3 = reportedTask(api, 'item 3', 'failed');
  api.core.inbox.snooze(i3.id, { until: new Date(api.clock.now() + 3_600_000).toISOString(), ...OPERATOR });
  const timers = api.timers;
  const store = createConsoleStore(api, { timers, now: timers.now, refreshIntervalMs: 0 });
  made.push(store, api);
  return { api, store, timers, i1, i2, i3 };
}

describe('inbox slice', () => {
  it('loads the open items with their counts, and the filter it was loaded for', async () => {
    const { store, i1, i2 } = make();
    store.actions.watch('inbox');
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter).toEqual({ state: 'open', kind: null });
    expect(list.items.map((i) => i.id)).toEqual([i2.id, i1.id]);
    expect(list.items.map((i) => i.kind)).toEqual(['task_failed', 'needs_human']);
    expect(list.counts).toMatchObject({ open: 2, critical: 1 });
  });

  it('a slow answer for the previous filter is never shown as the new one', async () => {
    const { api, store, i3 } = make();
    store.actions.watch('inbox');
    await settle();
    const release = api.hold('inbox.list');
    store.actions.setInboxFilter({ state: 'snoozed' });
    await settle();
    // Still the open list: tagged with its own filter, so the view does not show it as "snoozed".
    expect(store.store.getState().inboxList.data!.filter.state).toBe('open');
    release();
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter.state).toBe('snoozed');
    expect(list.items.map((i) => i.id)).toEqual([i3.id]);
  });

  it('acknowledging refreshes the list and the dashboard (the rail badge); bulk reports skipped ones', async () => {
    const { api, store, i1, i2 } = make();
    store.actions.watch('inbox');
    store.actions.watch('dashboard');
    await settle();
    expect(store.store.getState().dashboard.data!.inbox.open).toBe(2);
    await store.actions.acknowledge([i1.id], 'called them');
    await settle();
    expect(api.calls.find((c) => c.method === 'inbox.ack')!.args).toEqual({ id: i1.id, note: 'called them' });
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([i2.id]);
    expect(store.store.getState().dashboard.data!.inbox.open).toBe(1);
    await store.actions.acknowledge([i1.id, i2.id], null);
    await settle();
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ title: 'Acknowledged 1 item', body: '1 had been acknowledged already.' });
    expect(store.store.getState().inboxList.data!.items).toEqual([]);
  });

  it('a failed action says why and leaves the list as it was', async () => {
    const { api, store, i1, i2 } = make();
    store.actions.watch('inbox');
    await settle();
    // The core refuses a time in the past.
    await expect(store.actions.snooze(i1.id, '2020-01-01T00:00:00.000Z', null)).rejects.toMatchObject({ code: 'bad_request' });
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ title: 'Could not snooze the item', tone: 'error', body: expect.stringContaining('in the future') });
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([i2.id, i1.id]);
    expect(api.core.inbox.get(i1.id).state).toBe('open');
  });

  it('an inbox.changed event refreshes a watched inbox', async () => {
    const { api, store, timers, i1, i2 } = make();
    store.actions.watch('inbox');
    store.actions.start();
    await settle();
    const i4 = reportedTask(api, 'item 4', 'blocked');
    timers.advance(1000);
    await settle();
    expect(store.store.getState().inboxList.data!.items.map((i) => i.id)).toEqual([i4.id, i2.id, i1.id]);
  });
});

describe('never silent', () => {
  /** A job with no automatic retry, and an agent that fails its runs with `errorClass`: one failed run. */
  async function failedRun(api: ConsoleKit, errorClass: 'retryable' | 'fatal') {
    const { job } = await api.call('jobs.create', { spec: { name: 'nightly-qa', role: 'reporter', schedule: { cron: '0 2 * * *', timezone: 'UTC' }, retry: { maxAttempts: 1 } }, reason: 'test' });
    await KitAgent.join(api, 'reporter', (t, a) => a.fail(t.runId, errorClass));
    const { run } = await api.call('jobs.trigger', { id: job.id, reason: 'test' });
    await settle(20);
    expect(api.core.jobs.getRun(run.id).run.status).toBe('failed');
    api.calls.length = 0;
    return { job, run };
  }

  it('a Resolved tab lists the items that resolved themselves', async () => {
    const { api, store, i2 } = make();
    // The operator retries the failed task: its item resolves itself (the task moved on).
    api.core.tasks.retry({ taskId: i2.task.id, reason: 'try again', ...OPERATOR });
    store.actions.watch('inbox');
    store.actions.setInboxFilter({ state: 'resolved' });
    await settle();
    const list = store.store.getState().inboxList.data!;
    expect(list.filter.state).toBe('resolved');
    expect(list.items.map((i) => [i.id, i.resolution])).toEqual([[i2.id, expect.stringContaining('moved on')]]);
  });

  it('a deep link brings one item into focus by id, whatever its state; it is refreshed with the inbox', async () => {
    const { api, store, timers, i3 } = make();
    store.actions.watch('inbox');
    store.actions.start();
    store.actions.focusInboxItem(i3.id); // snoozed: not in the open list
    await settle();
    expect(api.argsOf('inbox.get')).toEqual([{ id: i3.id }]);
    expect(store.store.getState().inboxFocus.data).toMatchObject({ id: i3.id, state: 'snoozed' });
    // The item resolves itself meanwhile (its task is retried): the focused copy follows the live event.
    api.core.tasks.retry({ taskId: i3.task.id, reason: 'try again', ...OPERATOR });
    timers.advance(1000);
    await settle();
    expect(store.store.getState().inboxFocus.data).toMatchObject({ id: i3.id, state: 'resolved', resolution: expect.stringContaining('moved on') });
  });

  it('an answer for an item no longer in focus is dropped; an unknown item says not found', async () => {
    const { api, store, i1 } = make();
    const release = api.hold('inbox.get', { id: i1.id });
    store.actions.focusInboxItem(i1.id);
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
    const { job, run } = await failedRun(api, 'retryable');
    store.actions.watch('inbox');
    await settle();
    const before = api.countCalls('inbox.list');
    const r = await store.actions.retryRun({ id: run.id, job: 'nightly-qa', slot: run.slot });
    timers.advance(1000);
    await settle();
    expect(r.backfill).toMatchObject({ runId: run.id });
    expect(api.argsOf('runs.retry')).toEqual([{ id: run.id }]);
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ tone: 'success', title: `Retrying nightly-qa ${run.slot} now`, link: { label: 'Open the run', view: 'runs', param: job.id, query: { slot: run.slot } } });
    expect(api.countCalls('inbox.list')).toBeGreaterThan(before);
    // A toast with a link stays long enough to reach it (10 s, not 5).
    timers.advance(6000);
    expect(store.store.getState().toasts.some((t) => t.link)).toBe(true);
    timers.advance(4000);
    expect(store.store.getState().toasts.some((t) => t.link)).toBe(false);
  });

  it('a run that cannot be retried says why, and nothing changes', async () => {
    const { api, store } = make();
    // A fatal failure is held for the operator's review: not retried by hand.
    const { run } = await failedRun(api, 'fatal');
    const before = api.core.jobs.getRun(run.id);
    await expect(store.actions.retryRun({ id: run.id, job: 'nightly-qa', slot: run.slot })).rejects.toBeTruthy();
    expect(store.store.getState().toasts.at(-1)).toMatchObject({ tone: 'error', title: `Could not retry nightly-qa ${run.slot}`, code: 'invalid_transition' });
    expect(api.core.jobs.getRun(run.id)).toEqual(before);
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
