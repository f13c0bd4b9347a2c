/**
 * Every public core function, given invalid arguments, throws a typed GafferError and writes
 * nothing: neither state nor audit rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GafferError } from '../common/errors';
import { makeTestCore, onlineInstance, stateDigest, type TestCore } from './tests/test-core';

let core: TestCore;
let inst: string;
let heldTask: number;
beforeAll(() => {
  core = makeTestCore();
  inst = onlineInstance(core);
  core.tasks.create({ title: 'a', role: 'dev' }, { actor: 't' });
  heldTask = core.locks.claim({ instanceId: inst }).task!.id;
  core.tasks.create({ title: 'b', role: 'dev' }, { actor: 't' });
});
afterAll(() => core.close());

const GARBAGE: unknown[] = [undefined, null, 42, 'x', [], {}, { taskId: 'one' }, { taskId: -1 }, { taskId: 1.5 }, { taskId: Number.NaN }];
const huge = 'x'.repeat(100_000);

type Call = [name: string, fn: (arg: unknown) => unknown, bad: unknown[]];

const calls = (): Call[] => [
  ['tasks.create', (a) => core.tasks.create(a, { actor: 't' }), [
    ...GARBAGE,
    { title: '', role: 'dev' },
    { title: '   ', role: 'dev' },
    { title: 't', role: 'has space' },
    { title: 't', role: 'dev', priority: 1.5 },
    { title: 't', role: 'dev', priority: 1e12 },
    { title: 't', role: 'dev', dependsOn: 'x' },
    { title: 't', role: 'dev', dependsOn: [0] },
    { title: huge, role: 'dev' },
    { title: 't', role: 'dev', payload: { big: huge } },
    { title: 't', role: 'dev', extra: 1 },
    { title: 't', role: 'dev', idempotencyKey: '' },
    { title: 't', role: 'dev', dependsOn: [987654] },
  ]],
  ['tasks.get', (a) => core.tasks.get(a as number), [999_999]],
  ['tasks.list', (a) => core.tasks.list(a), [42, 'x', { limit: 0 }, { limit: 1e6 }, { status: 'nope' }, { role: '' }, { after: -1 }]],
  ['tasks.cancel', (a) => core.tasks.cancel(a), [...GARBAGE, { taskId: heldTask, reason: '', actor: 'op' }, { taskId: heldTask, actor: 'op' }, { taskId: 999_999, reason: 'r', actor: 'op' }]],
  ['tasks.retry', (a) => core.tasks.retry(a), [...GARBAGE, { taskId: heldTask, reason: 'r', actor: 'op' }]],
  ['tasks.unblock', (a) => core.tasks.unblock(a), [...GARBAGE, { taskId: heldTask, reason: 'r', actor: 'op' }]],
  ['tasks.forceRelease', (a) => core.tasks.forceRelease(a), [...GARBAGE, { taskId: heldTask, reason: ' ', actor: 'op' }, { taskId: heldTask, reason: 'r' }]],
  ['tasks.reprioritise', (a) => core.tasks.reprioritise(a), [...GARBAGE, { taskId: heldTask, priority: 'high', reason: 'r', actor: 'op' }]],
  ['locks.claim', (a) => core.locks.claim(a), [...GARBAGE, { instanceId: '' }, { instanceId: 'ghost' }, { instanceId: inst, role: 'bad role' }]],
  ['locks.renew', (a) => core.locks.renew(a), [...GARBAGE, { instanceId: inst, taskId: heldTask, fence: 0 }, { instanceId: inst, taskId: heldTask, fence: '1' }, { instanceId: inst, taskId: 999_999, fence: 1 }]],
  ['locks.report', (a) => core.locks.report(a), [
    ...GARBAGE,
    { instanceId: inst, taskId: heldTask, fence: 1, status: 'in_progress' },
    { instanceId: inst, taskId: heldTask, fence: 1, status: 'cancelled' },
    { instanceId: inst, taskId: heldTask, fence: 1, status: 'done', note: huge },
    { instanceId: inst, taskId: 999_999, fence: 1, status: 'done' },
  ]],
  ['instances.register', (a) => core.instances.register(a), [...GARBAGE, { role: 'dev' }, { role: 'dev', name: '' }, { role: '', name: 'n' }, { role: 'dev', name: 'n', version: huge }]],
  ['instances.heartbeat', (a) => core.instances.heartbeat(a as string), [undefined, null, 42, '', 'ghost']],
  ['instances.disconnect', (a) => core.instances.disconnect(a as string, 'why'), [undefined, null, 42, '']],
  ['instances.goOffline', (a) => core.instances.goOffline(a as string, 'heartbeat_timeout'), [undefined, null, 42, '']],
  ['instances.get', (a) => core.instances.get(a as string), [undefined, 42, '', 'ghost']],
  ['tokens.create', (a) => core.tokens.create(a), [...GARBAGE, { name: '', actor: 'op' }, { name: 'n', role: 'bad role', actor: 'op' }, { name: 'n' }]],
  ['tokens.revoke', (a) => core.tokens.revoke(a), [...GARBAGE, { id: 'tok_none', reason: 'r', actor: 'op' }, { id: 'x', actor: 'op' }]],
];

describe('bad input is refused with a typed error and changes nothing', () => {
  it.each(calls().map((c) => [c[0], c] as const))('%s', (_name, [name, fn, bad]) => {
    for (const arg of bad) {
      const state = stateDigest(core);
      const audit = core.audit.count();
      let error: unknown;
      try {
        fn(arg);
      } catch (e) {
        error = e;
      }
      const label = `${name}(${JSON.stringify(arg)?.slice(0, 80)})`;
      expect(error, label).toBeInstanceOf(GafferError);
      expect(['bad_request', 'not_found', 'invalid_transition', 'not_holder', 'forbidden'], label).toContain((error as GafferError).code);
      expect(stateDigest(core), label).toBe(state);
      // a refused lock operation by a would-be holder is itself audited (REJECT); nothing else is
      const added = core.audit.count() - audit;
      const rejectOnly = added === 0 || (added === 1 && (error as GafferError).code === 'not_holder');
      expect(rejectOnly, label).toBe(true);
    }
  });

  it('tokens.verify answers undefined for junk instead of throwing', () => {
    for (const junk of ['', 'x', 'gft_' + 'a'.repeat(43), huge, 42 as unknown as string]) expect(core.tokens.verify(junk)).toBeUndefined();
  });
});
