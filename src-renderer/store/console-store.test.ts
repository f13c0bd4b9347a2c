import { afterEach, describe, expect, it } from 'vitest';
import { ConsoleKit } from '../testing/console-kit';
import { createConsoleStore, SAFETY_STAGGER_MS, type ConsoleStore } from './console-store';

const settle = async (n = 6) => {
  for (let i = 0; i < n; i++) await new Promise<void>((r) => setImmediate(r));
};

const OPERATOR = { actor: 'operator:browser' };

let made: Array<{ cs: ConsoleStore; api: ConsoleKit }> = [];
function setup(opts: { auditRows?: number } = {}) {
  const api = new ConsoleKit();
  if (opts.auditRows) api.seedAudit(opts.auditRows);
  const timers = api.timers;
  const cs = createConsoleStore(api, { timers, now: timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 60_000, filterDebounceMs: 250 });
  made.push({ cs, api });
  return { api, core: api.core, timers, cs, s: () => cs.store.getState(), a: cs.actions };
}

/** A task of `role` taken by a fresh online instance of that role: in progress, with a lock. */
function claimedTask(api: ConsoleKit, title: string, role: string) {
  const task = api.core.tasks.create({ title, role }, OPERATOR).task;
  const instanceId = api.core.instances.register({ role, name: `${role}-agent` }).id;
  const c = api.core.locks.claim({ instanceId });
  expect(c.task?.id).toBe(task.id);
  return task;
}

afterEach(() => {
  made.forEach((m) => {
    m.cs.dispose();
    m.api.dispose();
  });
  made = [];
});

describe('console store', () => {
  it('loads a watched topic and marks the connection live', async () => {
    const { a, s } = setup();
    expect(s().conn.status).toBe('connecting');
    const off = a.watch('dashboard');
    await settle();
    expect(s().dashboard.data?.recoveryBoundS).toBe(180);
    expect(s().conn.status).toBe('live');
    off();
    expect(s().watched.dashboard).toBe(0);
  });

  it('coalesces a burst of live events into one refresh per watched topic', async () => {
    const { api, a, s, timers } = setup();
    a.start();
    a.watch('dashboard');
    a.watch('instances');
    await settle();
    const before = { d: api.countCalls('dashboard.get'), i: api.countCalls('instances.list'), r: api.countCalls('roles.summary') };
    // A burst of thousands is pushed through the hub directly; seeding it in the core would take seconds.
    api.emit(...Array.from({ length: 2000 }, (_, i) => ({ type: 'task.changed' as const, taskId: i, role: 'dev', status: 'done' as const })), { type: 'instance.changed', instanceId: 'x', status: 'online' });
    expect(s().conn.eventsReceived).toBe(2001);
    timers.advance(250);
    await settle();
    timers.advance(1000);
    await settle();
    expect(api.countCalls('dashboard.get') - before.d).toBe(1);
    expect(api.countCalls('instances.list') - before.i).toBe(1);
    // Not watched: not refreshed.
    expect(api.countCalls('roles.summary') - before.r).toBe(0);
  });

  it('the safety refresh takes the watched topics one at a time, not all in one task', async () => {
    const { api, a, timers } = setup();
    a.start();
    a.watch('dashboard');
    a.watch('instances');
    await settle();
    const before = { d: api.countCalls('dashboard.get'), i: api.countCalls('instances.list') };
    const since = () => api.countCalls('dashboard.get') - before.d + api.countCalls('instances.list') - before.i;
    timers.advance(60_000); // the test store's safetyRefreshMs
    await settle();
    expect(since()).toBe(1); // the first topic now...
    timers.advance(SAFETY_STAGGER_MS);
    await settle();
    expect(since()).toBe(2); // ...the next one in a task of its own
    expect(api.countCalls('dashboard.get') - before.d).toBe(1);
    expect(api.countCalls('instances.list') - before.i).toBe(1);
  });

  it('refreshes the queue only for the selected role, on events from the core', async () => {
    const { api, core, a, s, timers } = setup();
    claimedTask(api, 'b', 'dev');
    const devTask = core.tasks.create({ title: 'a', role: 'dev' }, OPERATOR).task;
    const pmTask = core.tasks.create({ title: 'c', role: 'pm' }, OPERATOR).task;
    a.start();
    a.watch('queue');
    a.selectRole('dev');
    await settle();
    expect(s().queue.columns.backlog.items.map((t) => t.title)).toEqual(['a']);
    expect(s().queue.columns.in_progress.items.map((t) => t.title)).toEqual(['b']);
    const n = api.countCalls('tasks.list');
    core.tasks.cancel({ taskId: pmTask.id, reason: 'not ours', ...OPERATOR });
    timers.advance(2000);
    await settle();
    expect(api.countCalls('tasks.list')).toBe(n);
    core.tasks.cancel({ taskId: devTask.id, reason: 'dropped', ...OPERATOR });
    timers.advance(2000);
    await settle();
    expect(api.countCalls('tasks.list')).toBe(n + Object.keys(s().queue.columns).length); // one page per column
  });

  it('a background refresh of the board that finds nothing changed sets no state (nothing re-renders); a change replaces only its column', async () => {
    const { api, core, a, s, cs, timers } = setup();
    claimedTask(api, 'b', 'dev');
    core.tasks.create({ title: 'a', role: 'dev' }, OPERATOR);
    a.start();
    a.watch('queue');
    a.selectRole('dev');
    await settle();
    const board = s().queue;
    let updates = 0;
    const off = cs.store.subscribe((next, prev) => void (next.queue !== prev.queue && updates++));
    const calls = api.countCalls('tasks.list');
    timers.advance(60_000); // the safety refresh
    await settle(12);
    expect(api.countCalls('tasks.list')).toBeGreaterThan(calls); // it did ask
    expect(updates).toBe(0);
    expect(s().queue).toBe(board);
    core.tasks.create({ title: 'c', role: 'dev' }, OPERATOR);
    timers.advance(2000);
    await settle(12);
    off();
    expect(s().queue.columns.backlog.items.map((t) => t.title)).toEqual(['a', 'c']);
    expect(s().queue.columns.backlog.items[0]).toBe(board.columns.backlog.items[0]); // the unchanged card keeps its identity
    expect(s().queue.columns.in_progress).toBe(board.columns.in_progress);
  });

  it('a page asked for while a background refresh of the column is out follows the refresh (started at once, the refresh would drop it)', async () => {
    const { api, core, a, s, timers } = setup();
    core.store.write(() => {
      for (let i = 0; i < 450; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, OPERATOR);
    });
    a.start();
    a.watch('queue');
    a.selectRole('dev');
    await settle();
    expect(s().queue.columns.backlog.items).toHaveLength(200);
    const release = api.hold('tasks.list');
    timers.advance(60_000); // the safety refresh: every column reloads, in the background
    await settle();
    expect(s().queue.columns.backlog.loading).toBe(false); // no spinner for it
    const calls = api.countCalls('tasks.list');
    const paged = a.loadMoreTasks('backlog');
    const again = a.loadMoreTasks('backlog'); // a second ask meanwhile pages once, not twice
    await settle();
    expect(api.countCalls('tasks.list')).toBe(calls); // not while the refresh is out
    release();
    await Promise.all([paged, again]);
    expect(s().queue.columns.backlog.items).toHaveLength(400);
    expect(s().queue.columns.backlog.items.map((t) => t.title).slice(198, 202)).toEqual(['t198', 't199', 't200', 't201']);
  });

  it('drops a slow answer for a role that is no longer selected', async () => {
    const { api, core, a, s } = setup();
    core.tasks.create({ title: 'dev task', role: 'dev' }, OPERATOR);
    core.tasks.create({ title: 'pm task', role: 'pm' }, OPERATOR);
    const release = api.hold('tasks.list');
    a.selectRole('dev');
    await settle();
    release();
    a.selectRole('pm');
    await settle(12);
    expect(s().queue.role).toBe('pm');
    expect(s().queue.columns.backlog.items.map((t) => t.title)).toEqual(['pm task']);
  });

  it('pages long columns on demand', async () => {
    const { core, a, s } = setup();
    core.store.write(() => {
      for (let i = 0; i < 450; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, OPERATOR);
    });
    a.selectRole('dev');
    await settle();
    expect(s().queue.columns.backlog.items).toHaveLength(200);
    expect(s().queue.columns.backlog.next).toBe(200);
    await a.loadMoreTasks('backlog');
    await a.loadMoreTasks('backlog');
    expect(s().queue.columns.backlog.items).toHaveLength(450);
    expect(s().queue.columns.backlog.next).toBeNull();
  });

  it('runs operator actions with a reason, toasts the outcome, and reports the error code', async () => {
    const { api, a, s } = setup();
    const t = claimedTask(api, 'x', 'dev');
    const r = await a.taskAction('forceRelease', t.id, 'agent hung');
    expect(r.status).toBe('backlog');
    expect(api.calls.find((c) => c.method === 'tasks.forceRelease')).toMatchObject({ method: 'tasks.forceRelease', args: { taskId: t.id, reason: 'agent hung' } });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'success', title: `Force-released task #${t.id}` });
    await expect(a.taskAction('retry', t.id, 'again')).rejects.toMatchObject({ code: 'invalid_transition' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', code: 'invalid_transition' });
  });

  it('creates tasks and tokens; the token secret is returned once', async () => {
    const { core, a, s } = setup();
    const t = await a.createTask({ title: 'New', role: 'dev', priority: 3 });
    expect(core.tasks.get(t.id).priority).toBe(3);
    const tok = await a.createToken('worker', 'dev');
    expect(tok.token).toMatch(/^gft_/);
    await settle();
    expect(s().tokens.data?.[0]).toMatchObject({ name: 'worker', role: 'dev', revokedAt: null });
    expect(JSON.stringify(s().tokens.data)).not.toContain(tok.token);
    await a.revokeToken(tok.id, 'lost laptop');
    await settle();
    expect(s().tokens.data?.[0]?.revokedAt).not.toBeNull();
  });

  it('sets the kill switch with a reason', async () => {
    const { a, s } = setup();
    await a.setKillSwitch(true, 'maintenance');
    expect(s().settings.data?.killSwitch).toBe(true);
    expect(s().toasts.at(-1)?.tone).toBe('warning');
  });

  it('a refused token puts the tab offline until the operator signs in; then what is watched reloads', async () => {
    const { api, a, s } = setup();
    api.requireToken('gfo_pasted');
    a.watch('dashboard');
    await settle();
    expect(s().conn).toMatchObject({ status: 'offline', lastError: { code: 'unauthorized' } });
    a.signIn('gfo_wrong');
    await settle();
    expect(s().conn).toMatchObject({ status: 'offline', lastError: { code: 'unauthorized' } });
    const before = api.countCalls('dashboard.get');
    a.signIn('gfo_pasted');
    await settle();
    expect(api.countCalls('dashboard.get')).toBe(before + 1);
    expect(s().conn.status).toBe('live');
    expect(s().dashboard.data).not.toBeNull();
  });

  it('marks the connection offline on a network error and recovers', async () => {
    const { api, a, s } = setup();
    api.dropNext('dashboard.get');
    await a.refresh('dashboard');
    expect(s().conn.status).toBe('offline');
    expect(s().dashboard.error).toMatchObject({ code: 'unavailable' });
    await a.refresh('dashboard');
    expect(s().conn.status).toBe('live');
    expect(s().dashboard.error).toBeNull();
  });
});

describe('audit slice', () => {
  it('loads newest first and pages by cursor', async () => {
    const { a, s } = setup({ auditRows: 1000 });
    a.watch('audit');
    await settle();
    expect(s().audit.items).toHaveLength(200);
    expect(s().audit.items[0]!.id).toBe(1000);
    expect(s().audit.next).toBe(801);
    expect(s().audit.total).toEqual({ count: 1000, exact: true });
    await a.loadMoreAudit();
    expect(s().audit.items).toHaveLength(400);
    expect(s().audit.items.at(-1)!.id).toBe(601);
    const ids = s().audit.items.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('debounces typed filters and ignores stale answers', async () => {
    const { api, a, s, timers } = setup({ auditRows: 300 });
    a.watch('audit');
    await settle();
    const n = api.countCalls('audit.query');
    a.setAuditForm({ type: 'l' });
    a.setAuditForm({ type: 'lock' });
    a.setAuditForm({ type: 'lock.claim' });
    timers.advance(249);
    await settle();
    expect(api.countCalls('audit.query')).toBe(n);
    timers.advance(1);
    await settle();
    expect(api.countCalls('audit.query')).toBe(n + 1);
    expect(s().audit.query).toEqual({ type: 'lock.claim' });
    expect(s().audit.items.every((e) => e.type === 'lock.claim')).toBe(true);
    expect(s().audit.items).toHaveLength(100);
    // A form edit that maps to the same query does not reload.
    a.setAuditForm({ type: ' lock.claim ' }, { immediate: true });
    await settle();
    expect(api.countCalls('audit.query')).toBe(n + 1);
  });

  it('keeps paging through partial pages (scan budget) until the screen fills', async () => {
    const { a, s } = setup();
    const { api } = made.at(-1)!;
    // A text search is a residual filter: each page examines at most SCAN_BUDGET (20 000) rows.
    // 20 500 rows, a match in every 500th: the first page ends partial after 40 matches. Written
    // straight into the table (as the core's own audit-query test does): hashing 20 000 rows
    // through the log would cost half a second, and paging does not read the chain.
    const insert = api.core.db.prepare(`INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?, ?, 'task.create', 'operator:browser', ?, ?, NULL, '0', 'h')`);
    api.core.db.transaction(() => {
      for (let i = 1; i <= 20_500; i++) insert.run(i, api.clock.now(), `task:${i}`, i % 500 === 1 ? '{"note":"needle"}' : '{}');
    })();
    a.watch('audit');
    await settle();
    a.setAuditForm({ text: 'needle' }, { immediate: true });
    await settle(60);
    expect(s().audit.items.every((e) => JSON.stringify(e.detail).includes('needle'))).toBe(true);
    expect(s().audit.items).toHaveLength(41);
    expect(s().audit.next).toBeNull();
    expect(s().audit.pages).toBeGreaterThan(1);
  });

  it('follows the live tail at the top, and counts unseen rows when scrolled away', async () => {
    const { api, a, s, timers } = setup({ auditRows: 10 });
    a.start();
    a.watch('audit');
    await settle();
    api.seedAudit(2);
    timers.advance(250);
    await settle();
    timers.advance(1000);
    await settle();
    expect(s().audit.items[0]!.id).toBe(12);
    expect(s().audit.items).toHaveLength(12);
    a.setAuditFollowing(false);
    api.seedAudit(5);
    // The hub's batch (100 ms), then the store's (250 ms).
    timers.advance(350);
    await settle();
    expect(s().audit.unseen).toBe(5);
    expect(s().audit.items[0]!.id).toBe(12);
    await a.showUnseenAudit();
    expect(s().audit.items[0]!.id).toBe(17);
    expect(s().audit.unseen).toBe(0);
  });

  it('exports with progress against the known total, and verifies the chain', async () => {
    const { a, s } = setup({ auditRows: 550 });
    a.watch('audit');
    await settle();
    await a.exportAudit('csv');
    expect(s().audit.export).toMatchObject({ running: false, rows: 550, total: 550, result: { rows: 550 } });
    await a.verifyAudit();
    expect(s().audit.verify.result).toMatchObject({ ok: true, checked: 550 });
  });

  it('shows export failures with their code', async () => {
    const { api, a, s } = setup({ auditRows: 5 });
    api.dropNext('exportAudit');
    await a.exportAudit('jsonl');
    expect(s().audit.export.error).toMatchObject({ code: 'unavailable' });
    expect(s().toasts.at(-1)).toMatchObject({ tone: 'error', code: 'unavailable' });
  });
});
