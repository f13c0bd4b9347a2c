import { afterEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../testing/test-core';
import { ChainVerifier, GENESIS_HASH } from './hash-chain';
import { auditRowToChainRow, type AuditRow } from './audit-log';

let core: TestCore;
afterEach(() => core?.close());

describe('audit log', () => {
  it('refuses UPDATE and DELETE at the database level', () => {
    core = makeTestCore();
    core.audit.record({ type: 'test', actor: 'a', subject: 's' });
    expect(() => core.db.prepare(`UPDATE audit SET actor = 'x'`).run()).toThrow(/append-only/);
    expect(() => core.db.prepare('DELETE FROM audit').run()).toThrow(/append-only/);
    expect(core.audit.count()).toBe(1);
  });

  it('chains rows: ids are dense and each row links to the previous hash', () => {
    core = makeTestCore();
    for (let i = 0; i < 20; i++) core.audit.record({ type: 'test', actor: 'a', subject: `s${i}`, detail: { i } });
    const rows = core.db.prepare('SELECT * FROM audit ORDER BY id').all() as AuditRow[];
    expect(rows.map((r) => r.id)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(rows[0]!.prev_hash).toBe(GENESIS_HASH);
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
    expect(core.audit.verify()).toEqual({ ok: true, checked: 20 });
  });

  it('detects a tampered, removed or reordered row', () => {
    core = makeTestCore();
    for (let i = 0; i < 5; i++) core.audit.record({ type: 'test', actor: 'a', subject: `s${i}` });
    const rows = (core.db.prepare('SELECT * FROM audit ORDER BY id').all() as AuditRow[]).map(auditRowToChainRow);
    const check = (rs: typeof rows) => {
      const v = new ChainVerifier(GENESIS_HASH);
      rs.forEach((r) => v.push(r));
      return v.result();
    };
    expect(check(rows).ok).toBe(true);
    expect(check(rows.map((r) => (r.id === 3 ? { ...r, actor: 'mallory' } : r)))).toMatchObject({ ok: false, brokenAt: 3 });
    expect(check(rows.filter((r) => r.id !== 2))).toMatchObject({ ok: false, brokenAt: 3 });
    expect(check([rows[0]!, rows[2]!, rows[1]!, rows[3]!, rows[4]!])).toMatchObject({ ok: false, brokenAt: 3 });
  });

  it('a write that fails rolls back its audit row with it', () => {
    core = makeTestCore();
    expect(() =>
      core.store.write(() => {
        core.audit.append({ type: 'test', actor: 'a', subject: 's' });
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(core.audit.count()).toBe(0);
  });
});

describe('audit time bounds', () => {
  it('stamps are non-decreasing even across a backward clock step, so time maps to ids by binary search', () => {
    core = makeTestCore();
    const t0 = core.clock.now();
    for (let i = 0; i < 10; i++) {
      core.audit.record({ type: 'test', actor: 'a', subject: `s${i}` });
      core.clock.advance(1000);
    }
    core.clock.jump(-60_000);
    core.audit.record({ type: 'test', actor: 'a', subject: 'after-step' });
    const ats = (core.db.prepare('SELECT at FROM audit ORDER BY id').all() as { at: number }[]).map((r) => r.at);
    for (let i = 1; i < ats.length; i++) expect(ats[i]!).toBeGreaterThanOrEqual(ats[i - 1]!);
    expect(core.audit.firstIdAtOrAfter(t0)).toBe(1);
    expect(core.audit.firstIdAtOrAfter(t0 + 3500)).toBe(5);
    expect(core.audit.firstIdAtOrAfter(t0 + 9000)).toBe(10);
    expect(core.audit.firstIdAtOrAfter(t0 + 999_999)).toBe(12);
  });
});
