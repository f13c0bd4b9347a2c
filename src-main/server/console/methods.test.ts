import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CONSOLE_METHODS, type ConsoleMethod } from '../../common/console-api';
import { HubFixture } from '../../core/tests/hub.testkit';
import { auditCount, onlineInstance, stateDigest, type TestCore } from '../../core/tests/test-core';
import { createConsoleMethods, type ConsoleMethods, type JobsConsolePort } from './methods';
import { isJobsMethod, type JobsMethod } from './methods-jobs';
import { isAttentionMethod, type AttentionMethod } from './methods-attention';
import { isManagedMethod, type ManagedMethod } from './methods-managed';
import { lastLocalDays, localDayKey, localWeekStart } from './read-models';
import { consoleUnderTest, expectRefusedUnchanged } from '../tests/methods.testkit';

const ACTOR = 'operator:desktop';
let core: TestCore;
let m: ConsoleMethods;

beforeEach(() => ({ core, m } = consoleUnderTest({ actor: ACTOR })));

afterEach(() => core.close());

function create(title: string, role = 'dev', extra: Record<string, unknown> = {}) {
  return core.tasks.create({ title, role, ...extra }, { actor: 'test' }).task;
}

function claim(instanceId: string) {
  const r = core.locks.claim({ instanceId });
  if (!r.task || !r.lock) throw new Error('nothing to claim');
  return { taskId: r.task.id, fence: r.lock.fence };
}

function lastAudit() {
  return core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]!;
}

function settingsDigest() {
  return JSON.stringify(core.db.prepare('SELECT * FROM settings ORDER BY key').all());
}

async function expectRefused(method: unknown, args: unknown, code?: string) {
  await expectRefusedUnchanged(m, core, () => `${stateDigest(core)}\n${settingsDigest()}`, method, args, code);
}

describe('console methods: the allow-list and argument validation', () => {
  it('refuses unknown methods and non-string names with bad_request', async () => {
    await expectRefused('tasks.drop', {});
    await expectRefused('__proto__', {});
    await expectRefused('constructor', {});
    await expectRefused(42, {});
    await expectRefused(undefined, {});
  });

  // One bad call per method: each is refused as bad_request and changes nothing.
  // (The jobs, managed-agent and attention methods have theirs in methods-jobs.test.ts /
  // methods-managed.test.ts / methods-attention.test.ts.)
  const bad: Record<Exclude<ConsoleMethod, JobsMethod | ManagedMethod | AttentionMethod>, unknown[]> = {
    'dashboard.get': [{ extra: 1 }, 'x'],
    'tasks.list': [{ status: 'nope' }, { limit: 0 }, { role: 'bad role!' }],
    'tasks.get': [{}, { taskId: -1 }, { taskId: '1' }],
    'tasks.create': [{ role: 'dev' }, { title: '', role: 'dev' }, { title: 't', role: 'dev', idempotencyKey: 'k' }, { title: 't', role: 'dev', dependsOn: 'x' }, { title: 't', role: 'dev', budget: { maxCostUsdPerRun: 0 } }, { title: 't', role: 'dev', budget: { maxTokensPerRun: 1.5 } }],
    'tasks.reprioritise': [{ taskId: 1, priority: 1 }, { taskId: 1, priority: 1.5, reason: 'r' }],
    'tasks.cancel': [{ taskId: 1 }, { taskId: 1, reason: '   ' }],
    'tasks.retry': [{ taskId: 1 }, { taskId: 1, reason: 'r', actor: 'operator:spoofed' }],
    'tasks.unblock': [{ taskId: 1 }],
    'tasks.forceRelease': [{ taskId: 1 }, { reason: 'r' }],
    'tasks.editPayload': [{ taskId: 1, reason: 'r' }, { taskId: 1, payload: 1 }, { taskId: 1, payload: 'x'.repeat(70_000), reason: 'r' }],
    'tasks.count': [{}, { filter: { q: '' } }, { filter: {}, action: 'delete' }],
    'tasks.bulk': [
      { action: 'cancel', ids: [1] },
      { action: 'cancel', reason: 'r' },
      { action: 'cancel', reason: 'r', ids: [1], filter: {} },
      { action: 'reprioritise', reason: 'r', ids: [1] },
      { action: 'cancel', reason: 'r', ids: [1], after: 3 },
      { action: 'cancel', reason: 'r', filter: {}, bulkId: 'nope' },
      { action: 'cancel', reason: 'r', ids: [1], actor: 'operator:spoofed' },
    ],
    'signals.list': [{ name: 'bad name!' }, { limit: 0 }],
    'signals.set': [{ name: 'data-ready', key: '2026-12-01', reason: '' }, { name: 'a/b', key: 'k', reason: 'r' }, { name: 'data-ready', key: 'k\u0001', reason: 'r' }],
    'signals.clear': [{ name: 'data-ready', key: '2026-12-01' }],
    'roles.summary': [{ role: 'dev' }],
    'locks.expiredToday': [{ since: 0 }],
    'instances.list': [[]],
    'tokens.list': [{ all: true }],
    'tokens.create': [{}, { name: 'n', role: 'bad role!' }],
    'tokens.revoke': [{ id: 'tok_x' }, { id: '', reason: 'r' }],
    'audit.query': [{ limit: 5000 }, { order: 'sideways' }, { from: 'yesterday' }],
    'audit.count': [{ limit: 5 }, { types: [] }],
    'audit.verify': [{ deep: true }],
    'settings.get': [{ x: 1 }],
    'settings.setKillSwitch': [{ on: true, reason: 'x'.repeat(2001) }, { on: 'yes', reason: 'r' }],
    'settings.setRequireReason': [{}, { on: 'yes' }, { on: true, reason: 'x'.repeat(2001) }],
    'logs.attempts': [{}, { subject: 'task:0' }, { subject: 'job:1' }],
    'logs.page': [{ subject: 'task:1', limit: 0 }, { subject: 'task:1', stream: 'video' }, { subject: 'run:a b' }],
    'logs.text': [{ subject: 'task:1' }, { subject: 'task:1', attempt: 0 }],
    'logs.search': [{}, { q: '   ' }, { q: 'x', limit: 1000 }],
    'logs.timeline': [{ subject: '' }],
    'logs.artifacts': [{}, { subject: 'job:1' }],
    'logs.diff': [{ subject: 'task:1', attempt: 0 }],
    'logs.changes': [{ subjects: 'task:1' }, { subjects: Array.from({ length: 1001 }, () => 'task:1') }],
    'logs.settings': [{ x: 1 }],
    'logs.setSettings': [{ settings: { retentionDays: 7 } }, { settings: { retentionDays: 0 }, reason: 'r' }, { settings: { bogus: 1 }, reason: 'r' }],
    'usage.summary': [{}, { by: 'week' }, { by: 'day', from: 'yesterday' }],
    'usage.daily': [{ by: 'day' }, { from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }],
    'usage.costliestRuns': [{ limit: 0 }, { from: 'x' }],
    'usage.ofSubjects': [{}, { subjects: [] }, { subjects: ['job:1'] }, { subjects: Array.from({ length: 201 }, (_, i) => `task:${i + 1}`) }],
  };

  it('has a bad-input case for every method', () => {
    expect(Object.keys(bad).sort()).toEqual(CONSOLE_METHODS.filter((m) => !isJobsMethod(m) && !isManagedMethod(m) && !isAttentionMethod(m)).sort());
  });

  for (const method of CONSOLE_METHODS.filter((m): m is Exclude<ConsoleMethod, JobsMethod | ManagedMethod | AttentionMethod> => !isJobsMethod(m) && !isManagedMethod(m) && !isAttentionMethod(m))) {
    it(`${method}: bad arguments → bad_request, nothing changed`, async () => {
      const id = onlineInstance(core);
      create('a task');
      claim(id);
      for (const args of bad[method]) await expectRefused(method, args);
    });
  }

  it('text that cannot be stored is refused for every method, naming the field (IPC delivers lone surrogates as they are)', async () => {
    const id = onlineInstance(core);
    create('a task');
    const t = claim(id);
    const cases: Array<[unknown, unknown, string]> = [
      ['tasks.create', { title: 'lone \ud800', role: 'dev' }, 'title'],
      ['tasks.create', { title: 't', role: 'dev', payload: { deep: [{ ['k\udc00']: 1 }] } }, 'payload.deep.0.k\ufffd'],
      ['tasks.cancel', { taskId: t.taskId, reason: 'because \udbff' }, 'reason'],
      ['audit.query', { actor: '\ud800' }, 'actor'],
      ['jobs.validate', { spec: { name: 'j\ud800' } }, 'spec.name'],
      ['calendars.importIcs', { id: 'c', ics: 'BEGIN:VCALENDAR\ud800', reason: 'r' }, 'ics'],
    ];
    for (const [method, args, field] of cases) {
      await expectRefused(method, args);
      const reply = await m.dispatch(method, args);
      expect(!reply.ok && reply.error.message, String(method)).toMatch(new RegExp(`^invalid ${String(method).replace('.', '\\.')} arguments at "${field.replace(/[.]/g, '\\.')}": (a key )?must be valid Unicode text`));
    }
  });

  it('call() throws a GafferError with the stable code', async () => {
    await expect(m.call('tasks.get', { taskId: 'x' })).rejects.toMatchObject({ code: 'bad_request', status: 400 });
    await expect(m.call('tasks.get', { taskId: 999 })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('a missing argument object counts as {}', async () => {
    const r = await m.dispatch('dashboard.get', undefined);
    expect(r.ok).toBe(true);
  });

  it('unexpected errors become a generic internal error', async () => {
    const broken = createConsoleMethods(
      Object.assign(Object.create(core), { tasks: { ...core.tasks, list: () => { throw new Error('secret detail /home/x'); } } }),
      { actor: ACTOR, port: null, dataDir: null, version: 'x' },
    );
    const r = await broken.dispatch('tasks.list', {});
    expect(r).toEqual({ ok: false, error: { code: 'internal', status: 500, message: 'internal error' } });
  });
});

describe('console methods: tasks', () => {
  it('creates, lists and gets tasks; the actor is recorded', async () => {
    const { task, replayed } = await m.call('tasks.create', { title: 'Write docs', role: 'dev', priority: 5, payload: { a: 1 } });
    expect(replayed).toBe(false);
    expect(task).toMatchObject({ title: 'Write docs', role: 'dev', priority: 5, status: 'backlog', payload: { a: 1 } });
    expect(lastAudit()).toMatchObject({ type: 'task.create', actor: ACTOR, subject: `task:${task.id}` });
    const page = await m.call('tasks.list', { role: 'dev' });
    expect(page.items.map((t) => t.id)).toEqual([task.id]);
    expect((await m.call('tasks.get', { taskId: task.id })).title).toBe('Write docs');
    await expect(m.call('tasks.create', { title: 'x', role: 'dev', dependsOn: [999] })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('payloads are bounded by the core', async () => {
    const before = stateDigest(core);
    const r = await m.dispatch('tasks.create', { title: 'big', role: 'dev', payload: 'x'.repeat(70_000) });
    expect(r.ok).toBe(false);
    expect(stateDigest(core)).toBe(before);
  });

  it('reprioritise / cancel / retry / unblock / force-release pass actor and reason to the core', async () => {
    const inst = onlineInstance(core);
    const a = create('a');
    const t = await m.call('tasks.reprioritise', { taskId: a.id, priority: 9, reason: 'urgent' });
    expect(t.priority).toBe(9);
    expect(lastAudit()).toMatchObject({ type: 'operator.reprioritise', actor: ACTOR, detail: { reason: 'urgent', to: 9 } });

    const held = claim(inst);
    const released = await m.call('tasks.forceRelease', { taskId: held.taskId, reason: 'stuck' });
    expect(released).toMatchObject({ status: 'backlog', previouslyExpired: true, lock: null });
    expect(lastAudit()).toMatchObject({ type: 'operator.force_release', actor: ACTOR, detail: { operatorReason: 'stuck' } });
    await expect(m.call('tasks.forceRelease', { taskId: held.taskId, reason: 'again' })).rejects.toMatchObject({ code: 'invalid_transition' });

    const again = claim(inst);
    core.locks.report({ instanceId: inst, taskId: again.taskId, fence: again.fence, status: 'failed' });
    expect((await m.call('tasks.retry', { taskId: again.taskId, reason: 'flaky' })).status).toBe('backlog');
    // (The failed task's inbox item resolved itself right after: its own row, by the inbox.)
    expect(core.auditQuery.query({ type: 'operator.retry', order: 'desc', limit: 1 }).items[0]).toMatchObject({ type: 'operator.retry', actor: ACTOR, detail: { reason: 'flaky' } });
    expect(lastAudit()).toMatchObject({ type: 'inbox.resolve', actor: 'inbox' });

    const third = claim(inst);
    core.locks.report({ instanceId: inst, taskId: third.taskId, fence: third.fence, status: 'blocked' });
    expect((await m.call('tasks.unblock', { taskId: third.taskId, reason: 'dep fixed' })).status).toBe('backlog');

    expect((await m.call('tasks.cancel', { taskId: a.id, reason: 'not needed' })).status).toBe('cancelled');
    expect(lastAudit()).toMatchObject({ type: 'operator.cancel', actor: ACTOR, detail: { reason: 'not needed' } });
    // A refused edge (cancelled is final) is a typed error and changes nothing.
    await expectRefused('tasks.retry', { taskId: a.id, reason: 'r' }, 'invalid_transition');
  });
});

describe('console methods: read models', () => {
  it('dashboard: counts, roles, throughput, kill switch, jobs port', async () => {
    const dev1 = onlineInstance(core, 'dev', 'dev-1');
    onlineInstance(core, 'reviewer', 'rev-1');
    const parent = create('parent', 'dev');
    create('child', 'dev', { dependsOn: [parent.id] });
    create('other', 'pm');
    create('done one', 'dev');
    create('failing', 'dev');
    // Claim order: priority then age → parent, done one, failing.
    const p = claim(dev1);
    core.locks.report({ instanceId: dev1, taskId: p.taskId, fence: p.fence, status: 'done' });
    const d = claim(dev1);
    core.locks.report({ instanceId: dev1, taskId: d.taskId, fence: d.fence, status: 'done' });
    const f = claim(dev1);
    core.locks.report({ instanceId: dev1, taskId: f.taskId, fence: f.fence, status: 'failed' });
    const h = claim(dev1); // the child, now ready
    core.tasks.forceRelease({ taskId: h.taskId, reason: 'test', actor: 'test' });
    core.clock.advance(60_000);

    const dash = await m.call('dashboard.get', {});
    expect(dash).toMatchObject({
      onlineInstances: 2,
      completedThisWeek: 2,
      expiredLocksToday: 1,
      runsNeedingAttention: 0,
      killSwitch: false,
      nextTriggers: [],
      recoveryBoundS: 180,
      serverTime: new Date(core.clock.now()).toISOString(),
    });
    const roles = Object.fromEntries(dash.roles.map((r) => [r.role, r]));
    expect(Object.keys(roles)).toEqual(['dev', 'pm', 'reviewer']);
    expect(roles.dev).toMatchObject({ ready: 1, waiting: 0, inProgress: 0, blocked: 0, failed: 1, done: 2, onlineInstances: 1 });
    expect(roles.dev!.oldestReadyAgeMs).toBe(60_000);
    expect(roles.pm).toMatchObject({ ready: 1, onlineInstances: 0 });
    expect(roles.reviewer).toMatchObject({ ready: 0, onlineInstances: 1, oldestReadyAgeMs: null });
    expect(dash.throughput).toHaveLength(7);
    expect(dash.throughput.map((p) => p.day)).toEqual(lastLocalDays(core.clock.now(), 7).map((d) => d.day));
    expect(dash.throughput[6]).toEqual({ day: localDayKey(core.clock.now()), done: 2, failed: 1, expired: 1 });
    expect(dash.throughput.slice(0, 6).every((p) => p.done + p.failed + p.expired === 0)).toBe(true);
    expect(await m.call('roles.summary', {})).toEqual(dash.roles);

    const jobs: JobsConsolePort = {
      runsNeedingAttention: () => 3,
      nextTriggers: (_now, limit) => [{ jobId: 'job_1', job: 'daily report', slot: '2026-12-01', at: '2026-12-01T09:00:00.000Z' }].slice(0, limit),
      killSwitch: () => false,
      setKillSwitch: () => {},
    };
    const withJobs = createConsoleMethods(core, { actor: ACTOR, port: null, dataDir: null, version: 'x' }, { jobs });
    expect(await withJobs.call('dashboard.get', {})).toMatchObject({ runsNeedingAttention: 3, nextTriggers: [{ jobId: 'job_1' }] });
  });

  it('dashboard: days and weeks are local calendar days', async () => {
    const inst = onlineInstance(core);
    const finish = (title: string) => {
      create(title);
      const c = claim(inst);
      core.locks.report({ instanceId: inst, taskId: c.taskId, fence: c.fence, status: 'done' });
      core.instances.heartbeat(inst);
    };
    const weekStart = localWeekStart(core.clock.now());
    finish('early in the week');
    // Sunday 23:00 local, same week: both completions count.
    core.clock.advanceTo(weekStart + 6 * 86_400_000 + 23 * 3600_000);
    core.instances.heartbeat(inst);
    finish('sunday night');
    let dash = await m.call('dashboard.get', {});
    expect(dash.completedThisWeek).toBe(2);
    expect(dash.throughput[6]!.done).toBe(1);
    // Monday 00:30 local: a new week; Sunday's completion is still in the 7-day throughput.
    core.clock.advanceTo(weekStart + 7 * 86_400_000 + 30 * 60_000);
    dash = await m.call('dashboard.get', {});
    expect(dash.completedThisWeek).toBe(0);
    expect(dash.throughput[5]!.done).toBe(1);
    expect(dash.throughput[6]!.done).toBe(0);
  });

  it('expired-lock cards: task, holder, when, re-claimed by whom (today only)', async () => {
    const a = onlineInstance(core, 'dev', 'alice');
    const b = onlineInstance(core, 'dev', 'bob');
    const t = create('flaky work');
    claim(a);
    core.clock.advance(1000);
    core.instances.goOffline(a, 'heartbeat_timeout');
    let cards = await m.call('locks.expiredToday', {});
    expect(cards).toHaveLength(1);
    expect(cards[0]).toMatchObject({ taskId: t.id, title: 'flaky work', role: 'dev', holder: a, holderName: 'alice', fence: 1, reason: 'heartbeat_timeout', reclaimedBy: null });
    core.clock.advance(1000);
    claim(b);
    cards = await m.call('locks.expiredToday', {});
    expect(cards[0]).toMatchObject({ reclaimedBy: b, reclaimedByName: 'bob', reclaimedAt: new Date(core.clock.now()).toISOString() });
    core.clock.advance(2 * 86_400_000);
    expect(await m.call('locks.expiredToday', {})).toEqual([]);
  });

  it('instances with the tasks they hold', async () => {
    const a = onlineInstance(core, 'dev', 'alice');
    onlineInstance(core, 'pm', 'pat');
    const t = create('held work');
    claim(a);
    const list = await m.call('instances.list', {});
    const alice = list.find((i) => i.id === a)!;
    expect(alice.held).toEqual([{ taskId: t.id, title: 'held work', expiresAt: new Date(core.clock.now() + 7200_000).toISOString() }]);
    expect(alice.heldTaskIds).toEqual([t.id]);
    expect(list.find((i) => i.name === 'pat')!.held).toEqual([]);
  });

  it('an instance whose lock was taken away while it was connected is listed as having lost it', async () => {
    const h = new HubFixture();
    try {
      const hm = createConsoleMethods(h.core, { actor: ACTOR, port: 7311, dataDir: null, version: '1.2.3' });
      const t = h.core.tasks.create({ title: 'taken work', role: 'dev' }, { actor: 'test' }).task;
      const a = await h.agent('dev', 'alice');
      await h.call(a.sock, 'claim');
      h.clock.advance(1000);
      h.core.tasks.forceRelease({ taskId: t.id, reason: 'stuck', actor: ACTOR });
      const alice = (await hm.call('instances.list', {})).find((i) => i.id === a.id)!;
      expect(alice.held).toEqual([]);
      expect(alice.lostLocks).toEqual([{ taskId: t.id, title: 'taken work', reason: 'force_release', at: new Date(h.core.clock.now()).toISOString() }]);
    } finally {
      h.close();
    }
  });
});

describe('console methods: tokens, audit, settings', () => {
  it('tokens: create (secret once), list, revoke with reason', async () => {
    const { id, token } = await m.call('tokens.create', { name: 'agent one', role: 'dev' });
    expect(token).toMatch(/^gft_/);
    expect(core.tokens.verify(token)?.id).toBe(id);
    const list = await m.call('tokens.list', {});
    expect(list).toEqual([expect.objectContaining({ id, name: 'agent one', role: 'dev', revokedAt: null })]);
    expect(JSON.stringify(list)).not.toContain(token);
    expect(lastAudit()).toMatchObject({ type: 'token.create', actor: ACTOR });
    const revoked = await m.call('tokens.revoke', { id, reason: 'rotated' });
    expect(revoked.revokedAt).not.toBeNull();
    expect(lastAudit()).toMatchObject({ type: 'token.revoke', actor: ACTOR, detail: { reason: 'rotated' } });
    expect(core.tokens.verify(token)).toBeUndefined();
    await expectRefused('tokens.revoke', { id, reason: 'again' }, 'invalid_transition');
    await expectRefused('tokens.revoke', { id: 'tok_nope', reason: 'r' }, 'not_found');
  });

  it('audit: query pages and filters; verify checks the live chain', async () => {
    create('one');
    create('two');
    const page = await m.call('audit.query', { type: 'task.create', order: 'desc', limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(page.items[0]!.type).toBe('task.create');
    expect(page.next).not.toBeNull();
    expect(await m.call('audit.count', { type: 'task.create' })).toEqual({ count: 2, exact: true });
    const v = await m.call('audit.verify', {});
    expect(v).toEqual({ ok: true, checked: auditCount(core) });
  });

  it('audit.verify reports a broken chain', async () => {
    create('one');
    create('two');
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare(`UPDATE audit SET actor = 'mallory' WHERE id = 1`).run();
    const v = await m.call('audit.verify', {});
    expect(v).toMatchObject({ ok: false, brokenAt: 1 });
    expect(v.reason).toMatch(/hash/);
  });

  it('settings: get, and the kill switch is the jobs.settings switch, set with an audited reason', async () => {
    expect(await m.call('settings.get', {})).toEqual({ config: core.config, killSwitch: false, requireReason: false, port: 7311, dataDir: core.dir, version: '1.2.3' });
    core.db.prepare(`INSERT INTO settings (key, value) VALUES ('jobs.settings', ?)`).run(JSON.stringify({ globalConcurrency: 4 }));
    const heard: unknown[] = [];
    const d = core.events.on('jobs.settings', (e) => heard.push(e.settings));
    const on = await m.call('settings.setKillSwitch', { on: true, reason: 'incident' });
    d.dispose();
    expect(on.killSwitch).toBe(true);
    const stored = JSON.parse((core.db.prepare(`SELECT value FROM settings WHERE key = 'jobs.settings'`).get() as { value: string }).value);
    // The row holds every jobs setting as read (the loop breaker's count at its default, 3).
    expect(stored).toEqual({ globalConcurrency: 4, loopBreaker: { sameErrorTimes: 3 }, killSwitch: { on: true, reason: 'incident', by: ACTOR, at: new Date(core.clock.now()).toISOString() } });
    expect(heard).toEqual([stored]);
    expect(lastAudit()).toMatchObject({ type: 'operator.kill_switch', actor: ACTOR, subject: 'settings:killSwitch', detail: { reason: 'incident', from: false, to: true } });
    expect((await m.call('dashboard.get', {})).killSwitch).toBe(true);
    expect((await m.call('settings.setKillSwitch', { on: false, reason: 'resolved' })).killSwitch).toBe(false);
  });

  it('"Require a reason for actions" is off by default: a required reason left out is audited as "no reason given"', async () => {
    const a = create('a');
    const b = create('b');
    expect((await m.call('settings.get', {})).requireReason).toBe(false);
    expect((await m.call('tasks.cancel', { taskId: a.id })).status).toBe('cancelled');
    expect(lastAudit()).toMatchObject({ type: 'operator.cancel', actor: ACTOR, detail: { reason: 'no reason given' } });
    // A blank reason is no reason either.
    expect((await m.call('tasks.cancel', { taskId: b.id, reason: '   ' })).status).toBe('cancelled');
    expect(lastAudit()).toMatchObject({ type: 'operator.cancel', detail: { reason: 'no reason given' } });
  });

  it('"Require a reason for actions" on: a required reason left out is refused (bad_request) and changes nothing', async () => {
    const t = create('a');
    const on = await m.call('settings.setRequireReason', { on: true, reason: 'a team now' });
    expect(on.requireReason).toBe(true);
    expect(lastAudit()).toMatchObject({ type: 'operator.settings', actor: ACTOR, subject: 'settings:operator', detail: { reason: 'a team now', requireReason: { from: false, to: true } } });
    const audits = auditCount(core);
    const reply = await m.dispatch('tasks.cancel', { taskId: t.id });
    expect(reply).toMatchObject({ ok: false, error: { code: 'bad_request' } });
    expect(core.tasks.get(t.id).status).toBe(t.status);
    expect(auditCount(core)).toBe(audits);
    // Off again (no reason needed to turn it off): the same call goes through.
    expect((await m.call('settings.setRequireReason', { on: false })).requireReason).toBe(false);
    expect((await m.call('tasks.cancel', { taskId: t.id })).status).toBe('cancelled');
  });

  it('by default the console uses core.jobs: one kill switch, the one the job runner obeys', async () => {
    await m.call('settings.setKillSwitch', { on: true, reason: 'maintenance' });
    expect(core.jobs.killSwitch()).toBe(true);
    expect(core.jobs.settings().killSwitch).toMatchObject({ on: true, reason: 'maintenance', by: ACTOR });
    expect((await m.call('dashboard.get', {})).runsNeedingAttention).toBe(core.jobs.runsNeedingAttention());
  });

  it('the console writes the kill switch only through the jobs port (the row has one writer)', async () => {
    let state = false;
    const calls: unknown[] = [];
    const jobs: JobsConsolePort = {
      runsNeedingAttention: () => 0,
      nextTriggers: () => [],
      killSwitch: () => state,
      setKillSwitch: (input) => {
        calls.push(input);
        state = input.on;
      },
    };
    const withJobs = createConsoleMethods(core, { actor: ACTOR, port: null, dataDir: null, version: 'x' }, { jobs });
    expect((await withJobs.call('settings.setKillSwitch', { on: true, reason: 'stop' })).killSwitch).toBe(true);
    expect(calls).toEqual([{ on: true, reason: 'stop', actor: ACTOR }]);
    // (The audit check's own row and the secrets key's check value, written at the core's first start, are not the console's.)
    expect(core.db.prepare(`SELECT * FROM settings WHERE key NOT IN ('audit.integrity', 'secrets')`).all()).toEqual([]);
  });
});

describe('console methods: finding and acting on many tasks', () => {
  it('searches titles, payload text and ids across roles', async () => {
    const a = create('Rotate the billing keys', 'ops');
    create('Docs', 'dev', { payload: { service: 'billing' } });
    create('Unrelated', 'dev');
    const page = await m.call('tasks.list', { q: 'billing' });
    expect(page.items.map((t) => t.title)).toEqual(['Rotate the billing keys', 'Docs']);
    expect(page.partial).toBe(false);
    expect((await m.call('tasks.list', { q: `#${a.id}` })).items.map((t) => t.id)).toEqual([a.id]);
  });

  it('a bulk action over a filter: count, then chunks; every task audited with the console actor, the reason and one bulk id', async () => {
    for (let i = 0; i < 5; i++) create(`import ${i}`, 'etl');
    create('keep me', 'etl');
    const count = await m.call('tasks.count', { filter: { role: 'etl', q: 'import' }, action: 'cancel' });
    expect(count).toMatchObject({ count: 5, exact: true });
    const r = await m.call('tasks.bulk', { action: 'cancel', reason: 'source retired', filter: { role: 'etl', q: 'import' }, through: count.through });
    expect(r.changed).toHaveLength(5);
    expect(r.next).toBeNull();
    const rows = core.auditQuery.query({ type: 'operator.cancel' }).items;
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row).toMatchObject({ actor: ACTOR, detail: { reason: 'source retired', bulk: r.bulkId } });
    expect((await m.call('tasks.list', { role: 'etl', status: 'backlog' })).items.map((t) => t.title)).toEqual(['keep me']);
  });

  it('edits a payload and retries with changes, as the console actor', async () => {
    const inst = onlineInstance(core);
    const t = create('build', 'dev', { payload: { branch: 'main' } });
    const c = claim(inst);
    core.locks.report({ instanceId: inst, taskId: c.taskId, fence: c.fence, status: 'failed' });
    const retried = await m.call('tasks.retry', { taskId: t.id, reason: 'wrong branch', payload: { branch: 'release' } });
    expect(retried).toMatchObject({ status: 'backlog', payload: { branch: 'release' } });
    const edited = await m.call('tasks.editPayload', { taskId: t.id, payload: { branch: 'release', dry: true }, reason: 'dry run first' });
    expect(edited.payload).toEqual({ branch: 'release', dry: true });
    expect(lastAudit()).toMatchObject({ type: 'operator.edit_payload', actor: ACTOR, detail: { reason: 'dry run first', before: { branch: 'release' } } });
  });
});

describe('console methods: signals', () => {
  it('sets, lists and clears a signal; who set it and why is kept', async () => {
    const set = await m.call('signals.set', { name: 'data-ready', key: '2026-12-01', reason: 'the upstream load finished', value: { rows: 12 } });
    expect(set.created).toBe(true);
    expect(set.signal).toMatchObject({ name: 'data-ready', key: '2026-12-01', actor: ACTOR, value: { rows: 12 } });
    expect(lastAudit()).toMatchObject({ type: 'signal.set', actor: ACTOR, subject: 'signal:data-ready/2026-12-01', detail: { reason: 'the upstream load finished' } });
    await m.call('signals.set', { name: 'data-ready', key: '2026-12-02', reason: 'r' });
    expect((await m.call('signals.list', { name: 'data-ready' })).items.map((s) => s.key)).toEqual(['2026-12-01', '2026-12-02']);
    const cleared = await m.call('signals.clear', { name: 'data-ready', key: '2026-12-01', reason: 'loaded the wrong day' });
    expect(cleared.key).toBe('2026-12-01');
    expect(lastAudit()).toMatchObject({ type: 'signal.clear', actor: ACTOR, detail: { reason: 'loaded the wrong day', setBy: ACTOR } });
    expect((await m.call('signals.list', {})).items.map((s) => s.key)).toEqual(['2026-12-02']);
    await expect(m.call('signals.clear', { name: 'data-ready', key: '2026-12-01', reason: 'again' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
