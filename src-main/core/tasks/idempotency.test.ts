/** The idempotency window against clock steps and restarts (manual clock; time travel in ms). */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { createCore } from '../create-core';
import { MIGRATIONS } from '../db/migrations';
import { errorCodeOf, makeTestCore, tempDir, type TestCore } from '../tests/test-core';

let core: TestCore | undefined;
afterEach(() => core?.close());

const MIN = 60_000;
const who = { actor: 'script' };
const body = { title: 'nightly report', role: 'dev', idempotencyKey: 'report-2026-11-30' };

describe('the 5-minute idempotency window is measured on monotonic time', () => {
  it('a +10 min wall-clock step does not shorten it: the retry returns the first task', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const first = core.tasks.create(body, who);
    core.clock.advance(MIN);
    core.clock.jump(10 * MIN);
    const retry = core.tasks.create(body, who);
    expect(retry).toMatchObject({ replayed: true, task: { id: first.task.id } });
    expect(core.tasks.list({}).items).toHaveLength(1);
  });

  it('a step back of an hour does not lengthen it: the key is free 5 minutes after it was first used', () => {
    core = makeTestCore({ idempotencyWindowS: 300 });
    const first = core.tasks.create(body, who);
    core.clock.jump(-60 * MIN);
    core.clock.advance(4 * MIN + 59_000);
    expect(core.tasks.create(body, who)).toMatchObject({ replayed: true, task: { id: first.task.id } });
    core.clock.advance(1000);
    const later = core.tasks.create(body, who);
    expect(later.replayed).toBe(false);
    expect(later.task.id).not.toBe(first.task.id);
  });

  it('across a restart the window follows the wall clock; a key from the "future" lives one window from the first sweep, not an hour', () => {
    const dir = tempDir();
    const clock = new ManualClock('2026-11-30T08:00:00.000Z');
    const a = createCore({ clock, dataDir: dir, config: { idempotencyWindowS: 300 } });
    const first = a.tasks.create(body, who);
    a.close();
    // Down for 2 minutes, then the wall clock is an hour behind (set back while Gaffer was down).
    clock.advance(2 * MIN);
    clock.jump(-60 * MIN);
    const b = createCore({ clock, dataDir: dir, config: { idempotencyWindowS: 300, sweepIntervalS: 60 } });
    core = Object.assign(b, { clock, dir }) as TestCore;
    b.start();
    expect(b.tasks.create(body, who)).toMatchObject({ replayed: true, task: { id: first.task.id } });
    clock.advance(11_000); // the post-restart sweep re-stamps the key at "now"
    clock.advance(5 * MIN);
    const again = b.tasks.create(body, who);
    expect(again.replayed).toBe(false);
  });
});

describe('keys are per caller (PROTOCOL §17), and keys from before stay working (migration 017)', () => {
  const body = (title: string, key: string) => ({ title, role: 'dev', idempotencyKey: key });
  const scopes = (c: TestCore) => Object.fromEntries(c.db.prepare<[], { key: string; scope: string }>('SELECT key, scope FROM idempotency ORDER BY key').all().map((r) => [r.key, r.scope]));

  it('a stored key moves to its creator: an agent its token, the operator the operator; one whose creator is unknown stays shared', () => {
    const dir = tempDir();
    const a = makeTestCore({ idempotencyWindowS: 300 }, dir);
    const token = a.tokens.create({ name: 'billing', role: 'dev', actor: 'operator:test' });
    const inst = a.instances.register({ role: 'dev', name: 'billing-1', tokenId: token.id });
    const byAgent = a.tasks.create(body('pay invoice 42', 'invoice-42'), { actor: inst.id, caller: `token:${token.id}` }).task;
    const byOperator = a.tasks.create(body('close the books', 'books'), { actor: 'operator:http' }).task;
    const byGone = a.tasks.create(body('from an instance since forgotten', 'gone'), { actor: 'inst_forgotten' }).task;
    // As a Gaffer from before keys were scoped kept them: one set for everyone.
    a.db.exec(`UPDATE idempotency SET scope = 'task.create'`);
    a.db.pragma(`user_version = ${MIGRATIONS.findIndex((m) => m.name === '017_idempotency_per_caller')}`);
    a.close();

    const b = makeTestCore({ idempotencyWindowS: 300 }, dir);
    core = b;
    expect(scopes(b)).toEqual({ 'invoice-42': `task.create:token:${token.id}`, books: 'task.create:operator', gone: 'task.create' });
    // Each creator's retry still replays; another caller's key of the same name is its own.
    expect(b.tasks.create(body('pay invoice 42', 'invoice-42'), { actor: 'inst_other', caller: `token:${token.id}` })).toMatchObject({ replayed: true, task: { id: byAgent.id } });
    expect(b.tasks.create(body('review invoice 42', 'invoice-42'), { actor: 'operator:desktop' })).toMatchObject({ replayed: false });
    expect(b.tasks.create(body('close the books', 'books'), { actor: 'operator:browser' })).toMatchObject({ replayed: true, task: { id: byOperator.id } });
    // The legacy key dedups for every caller, as before, until it expires.
    expect(b.tasks.create(body('from an instance since forgotten', 'gone'), { actor: 'operator:http' })).toMatchObject({ replayed: true, task: { id: byGone.id } });
    expect(errorCodeOf(() => b.tasks.create(body('something else', 'gone'), { actor: 'inst_x', caller: 'token:tok_x' }))).toBe('conflict');
    b.clock.advance(300_001);
    expect(b.tasks.create(body('something else', 'gone'), { actor: 'inst_x', caller: 'token:tok_x' }).replayed).toBe(false);
    // Running the migration again moves nothing twice.
    const before = scopes(b);
    MIGRATIONS.find((m) => m.name === '017_idempotency_per_caller')!.run!(b.db);
    expect(scopes(b)).toEqual(before);
  });
});
