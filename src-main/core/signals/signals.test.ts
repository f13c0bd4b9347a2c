import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';

let core: TestCore;
beforeEach(() => {
  core = makeTestCore();
});
afterEach(() => core.close());

const signalsDigest = () => JSON.stringify(core.db.prepare('SELECT * FROM signals ORDER BY name, key').all());

describe('signals', () => {
  it('sets, reads, refreshes and audits a signal', () => {
    expect(core.signals.get('data-ready', '2026-11-30')).toBeUndefined();
    const first = core.signals.set({ name: 'data-ready', key: '2026-11-30', actor: 'operator:test' });
    expect(first).toEqual({
      created: true,
      signal: { name: 'data-ready', key: '2026-11-30', setAt: '2026-11-30T08:00:00.000Z', actor: 'operator:test' },
    });
    expect(core.signals.get('data-ready', '2026-11-30')).toEqual(first.signal);
    core.clock.advance(60_000);
    const again = core.signals.set({ name: 'data-ready', key: '2026-11-30', actor: 'agent:x', value: { rows: 12 } });
    expect(again.created).toBe(false);
    expect(again.signal).toEqual({ name: 'data-ready', key: '2026-11-30', setAt: '2026-11-30T08:01:00.000Z', actor: 'agent:x', value: { rows: 12 } });

    const events = core.auditQuery.query({ type: 'signal.set' }).items;
    expect(events.map((e) => [e.actor, e.subject, e.detail])).toEqual([
      ['operator:test', 'signal:data-ready/2026-11-30', { name: 'data-ready', key: '2026-11-30' }],
      [
        'agent:x',
        'signal:data-ready/2026-11-30',
        { name: 'data-ready', key: '2026-11-30', value: { rows: 12 }, previousSetAt: '2026-11-30T08:00:00.000Z', previousActor: 'operator:test' },
      ],
    ]);
  });

  it('answers a precondition check with reason and evidence', () => {
    expect(core.signals.check('data-ready', '2026-W48')).toEqual({
      ready: false,
      reason: 'signal data-ready is not set for 2026-W48',
      evidence: { name: 'data-ready', key: '2026-W48', setAt: null, actor: null },
    });
    core.signals.set({ name: 'data-ready', key: '2026-W48', actor: 'op' });
    expect(core.signals.check('data-ready', '2026-W48')).toMatchObject({
      ready: true,
      evidence: { name: 'data-ready', key: '2026-W48', setAt: '2026-11-30T08:00:00.000Z', actor: 'op' },
    });
    // Keys are exact: another business date is another signal.
    expect(core.signals.check('data-ready', '2026-W49').ready).toBe(false);
    // A name that could never be set is simply not set (readers get an answer, not an exception).
    expect(core.signals.get('not a valid name', '2026-W48')).toBeUndefined();
    expect(core.signals.check('data-ready', 'bad\nkey').ready).toBe(false);
  });

  it('lists by (name, key) with a cursor and filters', () => {
    for (const [name, key] of [
      ['b', '2026-11-30'],
      ['a', '2026-12-01'],
      ['a', '2026-11-30'],
      ['c', '2026-11-30T09:00'],
      ['a', '2026-11-29'],
    ] as const) {
      core.signals.set({ name, key, actor: 'op' });
    }
    const keys = (items: Array<{ name: string; key: string }>) => items.map((s) => `${s.name}/${s.key}`);
    const p1 = core.signals.list({ limit: 2 });
    expect(keys(p1.items)).toEqual(['a/2026-11-29', 'a/2026-11-30']);
    const p2 = core.signals.list({ limit: 2, after: p1.next! });
    expect(keys(p2.items)).toEqual(['a/2026-12-01', 'b/2026-11-30']);
    const p3 = core.signals.list({ limit: 2, after: p2.next! });
    expect(keys(p3.items)).toEqual(['c/2026-11-30T09:00']);
    expect(p3.next).toBeNull();
    expect(keys(core.signals.list({ name: 'a', limit: 1, after: core.signals.list({ name: 'a', limit: 1 }).next! }).items)).toEqual(['a/2026-11-30']);
    expect(keys(core.signals.list({ key: '2026-11-30' }).items)).toEqual(['a/2026-11-30', 'b/2026-11-30']);
    expect(() => core.signals.list({ after: 'garbage' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
  });

  it('clears with a reason (audited); unknown is not_found', () => {
    core.signals.set({ name: 'data-ready', key: 'k', actor: 'op' });
    const cleared = core.signals.clear({ name: 'data-ready', key: 'k', actor: 'op2', reason: 'set by mistake' });
    expect(cleared).toMatchObject({ name: 'data-ready', key: 'k', actor: 'op' });
    expect(core.signals.get('data-ready', 'k')).toBeUndefined();
    expect(core.auditQuery.query({ type: 'signal.clear' }).items[0]).toMatchObject({
      actor: 'op2',
      detail: { reason: 'set by mistake', setBy: 'op' },
    });
    expect(() => core.signals.clear({ name: 'data-ready', key: 'k', actor: 'op', reason: 'again' })).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });

  it('refuses bad input and changes nothing', () => {
    core.signals.set({ name: 'ok', key: 'k', actor: 'op' });
    const before = signalsDigest();
    const audits = core.audit.count();
    for (const bad of [
      {},
      { name: 'ok', key: 'k' },
      { name: '', key: 'k', actor: 'op' },
      { name: 'has space', key: 'k', actor: 'op' },
      { name: 'a/b', key: 'k', actor: 'op' },
      { name: 'ok', key: '', actor: 'op' },
      { name: 'ok', key: 'line\nbreak', actor: 'op' },
      { name: 'ok', key: 'x'.repeat(201), actor: 'op' },
      { name: 'ok', key: 'k', actor: 'op', extra: 1 },
      { name: 'ok', key: 'k', actor: 'op', value: 'x'.repeat(70_000) },
    ]) {
      expect(() => core.signals.set(bad), JSON.stringify(bad).slice(0, 80)).toThrow(expect.objectContaining({ code: 'bad_request' }));
    }
    expect(() => core.signals.clear({ name: 'ok', key: 'k', actor: 'op' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(signalsDigest()).toBe(before);
    expect(core.audit.count()).toBe(audits);
  });

  it('survives a restart (migration 004)', () => {
    core.signals.set({ name: 'data-ready', key: '2026-11-30', actor: 'op', value: [1, 2] });
    core.close();
    const again = makeTestCore({}, core.dir);
    try {
      expect(again.signals.get('data-ready', '2026-11-30')).toMatchObject({ actor: 'op', value: [1, 2] });
      expect(again.db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(4);
    } finally {
      again.close();
    }
  });
});
