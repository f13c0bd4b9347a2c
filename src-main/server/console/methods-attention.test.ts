/** The console's inbox and notifications methods: bad input refused with nothing changed, the actor recorded, live events. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_METHODS, type ConsoleEvent } from '../../common/console-api';
import type { TestCore } from '../../core/tests/test-core';
import { coalesce, mapCoreEvent } from './events';
import type { ConsoleMethods } from './methods';
import { isAttentionMethod, type AttentionMethod } from './methods-attention';
import { consoleUnderTest, expectRefusedUnchanged } from '../tests/methods.testkit';
import { UsageLedger } from '../../core/logs/usage-store';

const ACTOR = 'operator:desktop';
let core: TestCore;
let m: ConsoleMethods;

beforeEach(() => ({ core, m } = consoleUnderTest({ actor: ACTOR, port: null, version: 'test' })));
afterEach(() => core.close());

const raise = (key: string, subject = 'run:r1') =>
  core.inbox.raise({ key, kind: 'needs_human', subject, about: { runId: 'r1', job: 'pay', slot: '2026-11-30' }, entry: { error: 'which account?' } })!;

function digest(): string {
  return JSON.stringify([
    core.db.prepare('SELECT * FROM inbox_items ORDER BY id').all(),
    core.db.prepare('SELECT * FROM webhook_deliveries').all(),
    core.db.prepare(`SELECT * FROM settings`).all(),
    core.db.prepare(`SELECT * FROM role_pauses`).all(),
  ]);
}

describe('bad input', () => {
  const bad: Record<AttentionMethod, unknown[]> = {
    'inbox.list': [{ state: 'closed' }, { limit: 0 }, { kind: 'nope' }],
    'inbox.counts': [{ x: 1 }],
    'inbox.get': [{}, { id: 'x' }],
    'inbox.ack': [{ id: 1, note: 'x'.repeat(2001) }, { id: 1, actor: 'operator:spoofed' }],
    'inbox.ackMany': [{ ids: [] }, { ids: ['a'] }],
    'inbox.snooze': [{ id: 1 }, { id: 1, until: 'later' }, { id: 1, until: '2000-01-01T00:00:00Z' }],
    'budgets.get': [{ day: 'today' }],
    'budgets.put': [{ globalDailyUsd: -1 }, { perRoleDailyUsd: { dev: 0 } }, { perRoleDailyUsd: { 'bad role!': 5 } }, { timezone: 'Mars/Olympus' }, { globalDailyUsd: 5, actor: 'x' }],
    'budgets.prices': [{ model: 'x' }],
    'budgets.jobForecast': [{}, { jobId: '' }],
    'budgets.forecast': [{ by: 'day' }],
    'budgets.attemptSpend': [{}, { subject: 'job:1' }, { subject: 'task:0' }],
    'budgets.putPrices': [{}, { models: { 'bad id!': { inputPerMTok: 1, outputPerMTok: 1 } } }, { reset: true, models: {} }, { reset: true, actor: 'x' }],
    'roles.pauses': [{ role: 'dev' }],
    'roles.pause': [{ role: 'dev' }, { role: 'bad role!', reason: 'r' }, { role: 'dev', reason: 'r', until: 'soon' }, { role: 'dev', reason: 'r', until: '2000-01-01T00:00:00Z' }],
    'roles.resume': [{}, { role: 'dev', reason: '' }],
    'notifications.get': [{ all: true }],
    'notifications.put': [{}, { webhooks: [{ url: 'file:///etc/passwd', events: ['needs_human'] }] }, { webhooks: [{ url: 'https://x.test', events: ['needs_human'] }], actor: 'x' }],
    'notifications.test': [{ webhookId: 'nope' }],
    'notifications.deliveries': [{ status: 'lost' }, { limit: 9999 }],
    'notifications.retryDelivery': [{}, { id: 0 }],
    'notifications.rotateSecret': [{}, { webhookId: 'not-a-webhook' }, { webhookId: 'wh_nope', actor: 'spoofed' }],
  };

  it('has a case for every attention method', () => {
    expect(Object.keys(bad).sort()).toEqual(CONSOLE_METHODS.filter(isAttentionMethod).sort());
  });

  for (const method of CONSOLE_METHODS.filter(isAttentionMethod)) {
    it(`${method}: refused as bad_request, nothing changed`, async () => {
      raise('a');
      for (const args of bad[method]) await expectRefusedUnchanged(m, core, digest, method, args);
    });
  }
});

describe('operator actions', () => {
  it('ack, bulk ack and snooze record the console actor; the dashboard counts the inbox', async () => {
    const a = raise('a');
    const b = raise('b', 'run:r2');
    const c = raise('c', 'run:r3');
    expect((await m.call('dashboard.get', {})).inbox).toMatchObject({ open: 3, critical: 3 });
    expect(await m.call('inbox.ack', { id: a.id, note: 'done' })).toMatchObject({ state: 'acked', ackedBy: ACTOR, note: 'done' });
    const until = new Date(core.clock.now() + 3600_000).toISOString();
    expect(await m.call('inbox.snooze', { id: b.id, until })).toMatchObject({ state: 'snoozed', snoozedUntil: until });
    const r = await m.call('inbox.ackMany', { ids: [a.id, c.id] });
    expect(r.skipped).toEqual([a.id]);
    expect((await m.call('inbox.counts', {}))).toMatchObject({ open: 0, snoozed: 1 });
    const actors = core.db.prepare(`SELECT DISTINCT actor FROM audit WHERE type IN ('inbox.ack','inbox.snooze')`).pluck().all();
    expect(actors).toEqual([ACTOR]);
  });

  it('notifications: a webhook\'s secret is rotated, shown once and audited masked; an unknown webhook is not_found', async () => {
    const v = await m.call('notifications.put', { webhooks: [{ url: 'https://example.test/hook' }] });
    const id = v.webhooks[0]!.id;
    const r = await m.call('notifications.rotateSecret', { webhookId: id, reason: 'leaked in a screenshot' });
    expect(r.webhookId).toBe(id);
    expect(r.secret).not.toBe(v.webhooks[0]!.secret);
    expect((await m.call('notifications.get', {})).webhooks[0]!.secret).toBe(`whsec_…${r.secret.slice(-4)}`);
    const row = core.auditQuery.query({ type: 'notifications.rotate', limit: 1 }).items[0]!;
    expect(row).toMatchObject({ actor: ACTOR, subject: `webhook:${id}`, detail: { reason: 'leaked in a screenshot', secret: `whsec_…${r.secret.slice(-4)}` } });
    expect(JSON.stringify(row)).not.toContain(r.secret);
    await expectRefusedUnchanged(m, core, digest, 'notifications.rotateSecret', { webhookId: 'wh_nope' }, 'not_found');
  });

  it('notifications: put and get masked, the update is audited with the actor', async () => {
    const v = await m.call('notifications.put', { webhooks: [{ url: 'https://ntfy.sh/very-secret-topic', events: ['dead_man'], format: 'ntfy' }], reason: 'phone' });
    expect(v.webhooks[0]!.url).toBe('https://ntfy.sh/very…');
    const got = await m.call('notifications.get', {});
    expect(JSON.stringify(got)).not.toContain('very-secret');
    // The signing secret was shown whole once, in the PUT's reply; every later read masks it.
    expect(v.webhooks[0]!.secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(got.webhooks[0]!.secret).toBe(`whsec_…${v.webhooks[0]!.secret.slice(-4)}`);
    const row = core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]!;
    expect(row).toMatchObject({ type: 'notifications.update', actor: ACTOR });
  });
});

describe('spend of an attempt', () => {
  it('a task: its own cap and what its latest attempt reported; a task without one; an unknown one is not_found', async () => {
    const capped = core.tasks.create({ title: 'fix', role: 'dev', budget: { maxCostUsdPerRun: 0.1 } }, { actor: ACTOR }).task;
    const free = core.tasks.create({ title: 'look', role: 'dev' }, { actor: ACTOR }).task;
    const ledger = new UsageLedger(core.db);
    core.store.write(() => ledger.add({ subject: `task:${capped.id}`, attempt: 0, role: 'dev', jobId: null, instanceId: 'i', inputTokens: 900, outputTokens: 100, costUsd: 0.04, at: core.clock.now() }));
    expect(await m.call('budgets.attemptSpend', { subject: `task:${capped.id}` })).toEqual({ subject: `task:${capped.id}`, attempt: 0, cap: { maxCostUsdPerRun: 0.1 }, capFrom: 'task', spent: { costUsd: 0.04, tokens: 1000 } });
    expect(await m.call('budgets.attemptSpend', { subject: `task:${free.id}` })).toMatchObject({ cap: null, capFrom: null, spent: { costUsd: 0, tokens: 0 } });
    await expect(m.call('budgets.attemptSpend', { subject: 'task:999' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(m.call('budgets.attemptSpend', { subject: 'run:nope' })).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('live events', () => {
  it('inbox.changed maps to a console event carrying what the desktop shell needs; a raise survives coalescing', () => {
    const events: ConsoleEvent[] = [];
    core.events.onAny((e) => events.push(...mapCoreEvent(e)));
    const a = raise('a');
    raise('b'); // folds: a second change of the same item
    core.inbox.ack(a.id, { actor: 'x' });
    const inbox = events.filter((e) => e.type === 'inbox.changed');
    expect(inbox.map((e) => e.type === 'inbox.changed' && e.action)).toEqual(['raised', 'repeated', 'acked']);
    expect(inbox[0]).toMatchObject({ itemId: a.id, kind: 'needs_human', severity: 'critical', title: 'pay 2026-11-30 needs a human', detail: 'which account?' });
    const batch = coalesce(events).filter((e) => e.type === 'inbox.changed');
    expect(batch.map((e) => e.type === 'inbox.changed' && e.action)).toEqual(['raised', 'acked']);
  });
});
