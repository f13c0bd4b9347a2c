import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GafferError } from '../../common/errors';
import { makeTestCore, onlineInstance, stateDigest, type TestCore } from '../tests/test-core';
import { GroupCommitter } from './group-commit';

let core: TestCore;
afterEach(() => core?.close());

function seed(n: number, role = 'dev'): number[] {
  return core.store.write(() => Array.from({ length: n }, (_, i) => core.tasks.create({ title: `t${i}`, role }, { actor: 'test' }).task.id));
}

const auditTypes = (type: string) =>
  (core.db.prepare('SELECT subject FROM audit WHERE type = ? ORDER BY id').all(type) as Array<{ subject: string }>).map((r) => r.subject);

describe('GroupCommitter', () => {
  it('applies ops submitted in one turn in ONE transaction, in order, and resolves each with its value', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const ids = seed(3);
    const a = onlineInstance(core, 'dev', 'a');
    const b = onlineInstance(core, 'dev', 'b');
    const c = onlineInstance(core, 'dev', 'c');
    const before = gc.stats.batches;
    const results = await Promise.all([a, b, c].map((instanceId) => gc.submit(() => core.locks.claim({ instanceId }))));
    expect(gc.stats.batches - before).toBe(1);
    expect(gc.stats.largestBatch).toBe(3);
    // Sequential savepoints: every claim saw the previous ones, so each got a different task.
    expect(results.map((r) => r.task!.id)).toEqual(ids);
    expect(results.map((r) => r.task!.lock!.instanceId)).toEqual([a, b, c]);
    expect(auditTypes('lock.claim')).toEqual(ids.map((id) => `task:${id}`));
  });

  it('later ops in a batch see earlier ones: a report right after its claim succeeds, a second claim finds nothing', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const [id] = seed(1);
    const a = onlineInstance(core, 'dev', 'a');
    const b = onlineInstance(core, 'dev', 'b');
    const claimA = gc.submit(() => core.locks.claim({ instanceId: a }));
    const claimB = gc.submit(() => core.locks.claim({ instanceId: b }));
    const report = gc.submit(() => core.locks.report({ instanceId: a, taskId: id!, fence: 1, status: 'done' }));
    expect((await claimA).task!.id).toBe(id);
    expect((await claimB).task).toBeNull(); // P2: nothing claimable, no wait
    expect((await report).task.status).toBe('done');
    expect(gc.stats.batches).toBe(1);
  });

  // Invariant 6: a batch of replayable ops runs without savepoints first; when an op fails, it runs
  // again guarded, and what commits is exactly what the guarded run alone gives.
  describe.each([
    ['guarded', {}],
    ['replayable', { replayable: true }],
  ] as const)('failures in a %s batch', (_name, opts) => {
    it('a failing op rejects alone: neighbours commit, and its deliberate reject audit row is kept', async () => {
      core = makeTestCore();
      const gc = new GroupCommitter(core.store);
      const [t1, t2] = seed(2);
      const a = onlineInstance(core, 'dev', 'a');
      const b = onlineInstance(core, 'dev', 'b');
      await gc.submit(() => core.locks.claim({ instanceId: a }), opts); // a holds t1 (fence 1)
      const digest = stateDigest(core);
      const bad = gc.submit(() => core.locks.report({ instanceId: b, taskId: t1!, fence: 1, status: 'done' }), opts);
      const boom = gc.submit(() => {
        core.store.write(() => core.audit.append({ type: 'test.kept', actor: 't', subject: 'x' }));
        throw new Error('plain failure after a nested write');
      }, opts);
      const good = gc.submit(() => core.locks.claim({ instanceId: b }), opts);
      await expect(bad).rejects.toMatchObject({ code: 'not_holder', status: 409 });
      await expect(boom).rejects.toThrow('plain failure');
      expect((await good).task!.id).toBe(t2);
      expect(gc.stats.batches).toBe(2);
      expect(core.tasks.get(t1!).lock!.instanceId).toBe(a);
      expect(stateDigest(core)).not.toBe(digest); // only because b's claim of t2 committed
      expect(auditTypes('lock.reject')).toEqual([`task:${t1}`]);
      // An op that fails keeps what it would have kept alone (its committed nested write).
      expect(auditTypes('test.kept')).toEqual(['x']);
    });

    it('a failing op inside its own store.write leaves no trace', async () => {
      core = makeTestCore();
      const gc = new GroupCommitter(core.store);
      const digest = stateDigest(core);
      const audits = core.audit.count();
      const bad = gc.submit(() =>
        core.store.write(() => {
          core.tasks.create({ title: 'ghost', role: 'dev' }, { actor: 't' });
          throw new GafferError('conflict', 'no');
        }),
        opts,
      );
      const ok = gc.submit(() => core.tasks.create({ title: 'real', role: 'dev' }, { actor: 't' }), opts);
      await expect(bad).rejects.toMatchObject({ code: 'conflict' });
      expect((await ok).task.title).toBe('real');
      expect(core.tasks.list({}).items.map((t) => t.title)).toEqual(['real']);
      expect(core.audit.count()).toBe(audits + 1);
      expect(digest).not.toBe(stateDigest(core));
    });

    it('a storage failure (unavailable) rolls back the whole batch and rejects every op in it', async () => {
      core = makeTestCore();
      const gc = new GroupCommitter(core.store);
      seed(2);
      const a = onlineInstance(core, 'dev', 'a');
      const digest = stateDigest(core);
      const audits = core.audit.count();
      const claim = gc.submit(() => core.locks.claim({ instanceId: a }), opts);
      const disk = gc.submit(() => {
        throw new GafferError('unavailable', 'disk full');
      }, opts);
      const create = gc.submit(() => core.tasks.create({ title: 'x', role: 'dev' }, { actor: 't' }), opts);
      for (const p of [claim, disk, create]) await expect(p).rejects.toMatchObject({ code: 'unavailable' });
      expect(stateDigest(core)).toBe(digest);
      expect(core.audit.count()).toBe(audits);
      // The committer keeps working afterwards.
      expect((await gc.submit(() => core.locks.claim({ instanceId: a }), opts)).task).not.toBeNull();
    });
  });

  it('a replayable batch opens no savepoint, a batch with one op that is not replayable one per op; both commit the same rows', async () => {
    const savepointsOf = async (replayable: boolean) => {
      core = makeTestCore();
      const gc = new GroupCommitter(core.store);
      seed(3);
      const ids = ['a', 'b', 'c'].map((n) => onlineInstance(core, 'dev', n));
      const proto = Object.getPrototypeOf(core.db.prepare('SELECT 1')) as { run: (...a: unknown[]) => unknown };
      const run = vi.spyOn(proto, 'run');
      const results = await Promise.all(ids.map((instanceId, i) => gc.submit(() => core.locks.claim({ instanceId }), { replayable: replayable || i > 0 })));
      const savepoints = run.mock.contexts.filter((c) => /^SAVEPOINT/.test((c as { source: string }).source)).length;
      run.mockRestore();
      const claimed = results.map((r) => r.task!.id);
      const audit = auditTypes('lock.claim');
      core.close();
      return { savepoints, claimed, audit };
    };
    const guarded = await savepointsOf(false);
    const replayable = await savepointsOf(true);
    expect(guarded.savepoints).toBe(3);
    expect(replayable.savepoints).toBe(0);
    expect(replayable.claimed).toEqual(guarded.claimed);
    expect(replayable.audit).toEqual(guarded.audit);
  });

  it('a replayable op that carries on after a nested write failed (as a refused claimNext does) commits nothing of that write', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const r = await gc.submit(() => {
      try {
        core.store.write(() => {
          core.tasks.create({ title: 'ghost', role: 'dev' }, { actor: 't' });
          throw new GafferError('conflict', 'no');
        });
      } catch {
        /* the op goes on, as claimAfterReport does when the claim is refused */
      }
      return core.tasks.create({ title: 'real', role: 'dev' }, { actor: 't' }).task.title;
    }, { replayable: true });
    expect(r).toBe('real');
    expect(core.tasks.list({}).items.map((t) => t.title)).toEqual(['real']);
    expect(gc.stats.replayed).toBe(1);
    expect(core.audit.verify().ok).toBe(true);
  });

  it('after a batch had to run twice, the next batches go straight to the guarded run (a failing agent cannot double every batch)', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const fail = () => {
      throw new GafferError('conflict', 'no');
    };
    for (let i = 0; i < 5; i++) await expect(gc.submit(fail, { replayable: true })).rejects.toMatchObject({ code: 'conflict' });
    expect(gc.stats.replayed).toBe(1);
  });

  it('replayable ops flushed from inside a write run guarded, nested in it', () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store, { schedule: () => {} });
    const made = gc.submit(() => core.tasks.create({ title: 'inside', role: 'dev' }, { actor: 't' }).task.title, { replayable: true });
    core.store.write(() => gc.flushAll());
    expect(core.tasks.list({}).items.map((t) => t.title)).toEqual(['inside']);
    return expect(made).resolves.toBe('inside');
  });

  it('caps the batch size and keeps submission order across batches', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store, { maxBatch: 4 });
    const done: number[] = [];
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => gc.submit(() => core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 't' })).then(() => done.push(i))),
    );
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(gc.stats.batches).toBe(3);
    expect(gc.stats.largestBatch).toBe(4);
    expect(core.tasks.list({}).items.map((t) => t.title)).toEqual(done.map((i) => `t${i}`));
  });

  it('settles a promise only after its transaction is durable (visible to another connection)', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const other = new Database(core.dbPath, { readonly: true });
    try {
      const count = () => (other.prepare('SELECT count(*) AS n FROM tasks').get() as { n: number }).n;
      let seenInside = -1;
      const p = gc.submit(() => {
        const r = core.tasks.create({ title: 'x', role: 'dev' }, { actor: 't' });
        seenInside = count();
        return r;
      });
      expect(count()).toBe(0); // not even started: flushed at the end of the turn
      const seenAfter = await p.then(() => count());
      expect(seenInside).toBe(0); // inside the open transaction nobody else sees it
      expect(seenAfter).toBe(1);
    } finally {
      other.close();
    }
  });

  it('close() commits what is queued, then refuses new ops with unavailable', async () => {
    core = makeTestCore();
    const gc = new GroupCommitter(core.store);
    const p = gc.submit(() => core.tasks.create({ title: 'queued', role: 'dev' }, { actor: 't' }));
    gc.close();
    expect(core.tasks.list({}).items).toHaveLength(1);
    expect((await p).task.title).toBe('queued');
    await expect(gc.submit(() => 1)).rejects.toMatchObject({ code: 'unavailable' });
  });
});
