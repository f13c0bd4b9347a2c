import { afterEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { toWellFormedText } from '../../common/text';
import { checkInvariants } from '../tests/invariants';
import { exportAudit, verifyExport, verifyLiveRange } from './audit-export';
import { ChainVerifier, GENESIS_HASH, rowHash } from './hash-chain';
import { decodeWtf8 } from './stored-text';
import { auditRowToChainRow, SUBJECT_INDEX_CHUNK, SUBJECT_INDEX_LAG, type AuditRow } from './audit-store';
import { oldestAbout } from './query-store';

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
    expect(check(rows.filter((r) => r.id !== 2))).toMatchObject({ ok: false, brokenAt: 2, reason: 'gap: row 2 missing' });
    expect(check([rows[0]!, rows[2]!, rows[1]!, rows[3]!, rows[4]!])).toMatchObject({
      ok: false,
      problems: [
        { id: 2, kind: 'gap', reason: 'gap: row 2 missing' },
        { id: 2, kind: 'gap', reason: 'row 2 is out of order or repeated' },
      ],
    });
  });

  it('reports every bad row and keeps checking after it (one bad row is one problem)', () => {
    core = makeTestCore();
    for (let i = 0; i < 8; i++) core.audit.record({ type: 'test', actor: 'a', subject: `s${i}` });
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.exec('DROP TRIGGER audit_no_delete');
    core.db.prepare(`UPDATE audit SET actor = 'mallory' WHERE id IN (2, 5)`).run();
    core.db.prepare('DELETE FROM audit WHERE id = 7').run();
    expect(core.audit.verify()).toEqual({
      ok: false,
      checked: 7,
      brokenAt: 2,
      reason: 'row content does not match its hash',
      problemCount: 3,
      problems: [
        { id: 2, kind: 'content', reason: 'row content does not match its hash' },
        { id: 5, kind: 'content', reason: 'row content does not match its hash' },
        { id: 7, kind: 'gap', reason: 'gap: row 7 missing' },
      ],
    });
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

describe('audit time', () => {
  it('stamps never go back, except at a recorded clock step, after which they carry true time again', () => {
    core = makeTestCore();
    core.start();
    for (let i = 0; i < 10; i++) {
      core.audit.record({ type: 'test', actor: 'a', subject: `s${i}` });
      core.clock.advance(1000);
    }
    const before = core.clock.now();
    core.clock.jump(-3600_000); // the wall clock steps back an hour
    core.audit.record({ type: 'test', actor: 'a', subject: 'before-detection' });
    core.clock.advance(1000); // one pulse of the gap detector
    core.audit.record({ type: 'test', actor: 'a', subject: 'after-step' });
    const rows = core.db.prepare('SELECT id, at, type, subject FROM audit ORDER BY id').all() as Array<{ id: number; at: number; type: string; subject: string }>;
    const bySubject = (s: string) => rows.find((r) => r.subject === s)!;
    // Written between the step and its detection: the last instant, not earlier.
    expect(bySubject('before-detection').at).toBe(before - 1000);
    // The step row: true time at its detection, within one pulse of the step.
    const step = rows.find((r) => r.type === 'clock.jump')!;
    expect(step.at).toBeGreaterThan(before - 3600_000);
    expect(step.at).toBeLessThanOrEqual(before - 3600_000 + 1000);
    expect(bySubject('after-step').at).toBe(core.clock.now());
    // The only decrease is at the step row.
    const decreases = rows.filter((r, k) => k > 0 && r.at < rows[k - 1]!.at).map((r) => r.type);
    expect(decreases).toEqual(['clock.jump']);
  });

  it('only a clock-step row may carry an earlier time', () => {
    core = makeTestCore();
    expect(() => core.audit.record({ type: 'test', actor: 'a', subject: 's', clockStep: true })).toThrow(/only clock.jump rows/);
    expect(core.audit.count()).toBe(0);
  });
});

describe('audit tail cache and bulk subject index', () => {
  const indexedTo = () => core.db.prepare('SELECT indexed_to FROM audit_subjects_progress').pluck().get() as number;

  it('keeps the chain dense and linked across rolled-back appends (outer and savepoint)', () => {
    core = makeTestCore();
    core.audit.record({ type: 'test', actor: 'a', subject: 's' });
    expect(() =>
      core.store.write(() => {
        core.audit.append({ type: 'test', actor: 'a', subject: 'gone' });
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    core.store.write(() => {
      core.audit.append({ type: 'test', actor: 'a', subject: 'kept-1' });
      try {
        core.store.write(() => {
          core.audit.append({ type: 'test', actor: 'a', subject: 'gone' });
          throw new Error('savepoint');
        });
      } catch {
        // the savepoint rolled back alone
      }
      core.audit.append({ type: 'test', actor: 'a', subject: 'kept-2' });
    });
    const rows = core.db.prepare('SELECT id, subject FROM audit ORDER BY id').all();
    expect(rows).toEqual([
      { id: 1, subject: 's' },
      { id: 2, subject: 'kept-1' },
      { id: 3, subject: 'kept-2' },
    ]);
    expect(core.audit.verify()).toEqual({ ok: true, checked: 3 });
  });

  it('indexes subjects in bulk and finds every event of a subject on both sides of the mark, in both orders', () => {
    core = makeTestCore();
    const total = SUBJECT_INDEX_LAG * 2 + 300;
    core.store.write(() => {
      for (let i = 0; i < total; i++) core.audit.append({ type: 'test', actor: 'a', subject: `s${i % 7}` });
    });
    // The lag never exceeds the threshold, and the mark sits where a bulk run ended.
    expect(indexedTo()).toBe(SUBJECT_INDEX_LAG * 2);
    expect(core.db.prepare('SELECT count(*) FROM audit_subjects').pluck().get()).toBe(SUBJECT_INDEX_LAG * 2);
    const expected = Array.from({ length: total }, (_, i) => i + 1).filter((id) => (id - 1) % 7 === 3);
    const walk = (order: 'asc' | 'desc') => {
      const ids: number[] = [];
      let cursor: string | null = null;
      do {
        const cur = cursor === null ? {} : order === 'asc' ? { after: Number(cursor) } : { before: Number(cursor) };
        const page = core.auditQuery.query({ subject: 's3', order, limit: 50, ...cur });
        ids.push(...page.items.map((e) => e.id));
        cursor = page.next;
      } while (cursor !== null);
      return ids;
    };
    expect(walk('asc')).toEqual(expected);
    expect(walk('desc')).toEqual([...expected].reverse());
    expect(core.auditQuery.count({ subject: 's3' })).toEqual({ count: expected.length, exact: true });
  });

  it('oldestAbout reads several subjects through the index and its unindexed tail, oldest first', () => {
    core = makeTestCore();
    const total = SUBJECT_INDEX_LAG + 200;
    core.store.write(() => {
      for (let i = 0; i < total; i++) core.audit.append({ type: 'test', actor: 'a', subject: `s${i % 7}` });
    });
    expect(indexedTo()).toBe(SUBJECT_INDEX_LAG);
    const about = (id: number) => (id - 1) % 7 === 2 || (id - 1) % 7 === 5;
    const all = Array.from({ length: total }, (_, i) => i + 1).filter(about);
    expect(oldestAbout(core.db, ['s2', 's5'], 10_000).map((r) => r.id)).toEqual(all);
    expect(oldestAbout(core.db, ['s5', 's2'], 5).map((r) => r.id)).toEqual(all.slice(0, 5));
    expect(oldestAbout(core.db, ['nobody'], 10)).toEqual([]);
    expect(oldestAbout(core.db, [], 10)).toEqual([]);
  });

  it('a rolled-back bulk run leaves the mark where it was, and the next append catches up', () => {
    core = makeTestCore();
    core.store.write(() => {
      for (let i = 0; i < SUBJECT_INDEX_LAG - 1; i++) core.audit.append({ type: 'test', actor: 'a', subject: 'x' });
    });
    expect(indexedTo()).toBe(0);
    expect(() =>
      core.store.write(() => {
        core.audit.append({ type: 'test', actor: 'a', subject: 'y' });
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    expect(indexedTo()).toBe(0);
    core.audit.record({ type: 'test', actor: 'a', subject: 'z' });
    expect(indexedTo()).toBe(SUBJECT_INDEX_LAG);
    expect(core.auditQuery.query({ subject: 'z' }).items.map((e) => e.id)).toEqual([SUBJECT_INDEX_LAG]);
    expect(core.auditQuery.query({ subject: 'y' }).items).toEqual([]);
  });

  it('catches up a large unindexed backlog a chunk per append, finding every row meanwhile', () => {
    core = makeTestCore();
    // Rows written around AuditLog (as a seeded database would have them): none indexed yet.
    const backlog = SUBJECT_INDEX_CHUNK * 2 + 10;
    const ins = core.db.prepare(`INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?, 1, 't', 'x', ?, '{}', NULL, '0', 'h')`);
    core.db.transaction(() => {
      for (let i = 1; i <= backlog; i++) ins.run(i, i % 2 ? 'odd' : 'even');
    })();
    try {
      core.store.write(() => {
        throw new Error('the tail cache must re-read the rows written around it');
      });
    } catch {
      // a rollback starts a new epoch
    }
    core.audit.record({ type: 't', actor: 'x', subject: 'odd' });
    expect(indexedTo()).toBe(SUBJECT_INDEX_CHUNK);
    expect(core.auditQuery.count({ subject: 'odd' }, 1e9)).toEqual({ count: backlog / 2 + 1, exact: true });
    core.audit.record({ type: 't', actor: 'x', subject: 'odd' });
    core.audit.record({ type: 't', actor: 'x', subject: 'odd' });
    // Caught up: what is left unindexed is under the usual lag.
    expect(indexedTo()).toBe(SUBJECT_INDEX_CHUNK * 2);
    expect(backlog + 3 - indexedTo()).toBeLessThan(SUBJECT_INDEX_LAG);
    expect(core.auditQuery.count({ subject: 'odd' }, 1e9)).toEqual({ count: backlog / 2 + 3, exact: true });
  });
});

describe('text that UTF-8 cannot hold', () => {
  const NASTY = ['k-\ud800-x', '\udc00\ud800', 'a\u0000b', '\ufeffbom', '\ufffd', 'ok \ud83d\ude00', 'ключ', 'x'.repeat(5000) + '\udbff'];

  it('no text can make a row unverifiable: each row is hashed over exactly what is stored', () => {
    core = makeTestCore();
    for (const s of NASTY) core.audit.record({ type: `t${s}`, actor: `a${s}`, subject: `s${s}`, detail: { s, [s]: s }, traceId: s });
    expect(core.audit.verify()).toEqual({ ok: true, checked: NASTY.length });
    const rows = core.db.prepare('SELECT * FROM audit ORDER BY id').all() as AuditRow[];
    rows.forEach((r, i) => {
      // Reads back as written, with an unpaired surrogate as U+FFFD in the plain columns …
      expect(r.subject).toBe(`s${toWellFormedText(NASTY[i]!)}`);
      expect(r.trace_id).toBe(toWellFormedText(NASTY[i]!));
      // … and escaped (so kept exactly) in the JSON detail.
      expect(JSON.parse(r.detail)).toEqual({ s: NASTY[i], [NASTY[i]!]: NASTY[i] });
    });
  });

  /** What a Gaffer from before the fix wrote: the hash of the JS string, the string handed to SQLite as is. */
  function appendLikeBefore(subject: string, actor = 'operator:http'): number {
    const tail = core.db.prepare('SELECT id, hash, at FROM audit ORDER BY id DESC LIMIT 1').get() as { id: number; hash: string; at: number } | undefined;
    const row = { id: (tail?.id ?? 0) + 1, at: core.clock.now(), type: 'signal.set', actor, subject, detail: JSON.stringify({ subject }), traceId: null, prevHash: tail?.hash ?? GENESIS_HASH };
    core.db.prepare('INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)').run(row.id, row.at, row.type, row.actor, row.subject, row.detail, null, row.prevHash, rowHash(row));
    return row.id;
  }

  it('a database broken by the old bug: verification names each such row and why, and every other row still verifies', async () => {
    core = makeTestCore();
    appendLikeBefore('signal:lone/k-\ud800-x');
    appendLikeBefore('signal:ok/plain');
    appendLikeBefore('signal:two/\udc00\ud800', 'op\udfff');
    core.audit.record({ type: 'test', actor: 'a', subject: 'after the bug' });
    const stored = core.db.prepare('SELECT hex(CAST(subject AS BLOB)) AS h, subject FROM audit WHERE id = 1').get() as { h: string; subject: string };
    expect(stored.h).toContain('EDA080'); // the surrogate, as V8 hands it to SQLite: not UTF-8
    expect(stored.subject).toBe('signal:lone/k-\ufffd\ufffd\ufffd-x');

    const expected = {
      ok: true,
      checked: 4,
      legacyTextCount: 2,
      legacyText: [
        { id: 1, fields: ['subject'], reason: expect.stringMatching(/^subject holds an unpaired UTF-16 surrogate, stored as invalid UTF-8 .*\(not altered\)/) },
        { id: 3, fields: ['actor', 'subject'], reason: expect.stringMatching(/^actor, subject holds/) },
      ],
    };
    expect(core.audit.verify()).toEqual(expected);
    expect(await verifyLiveRange(core.db)).toEqual({ ...expected, firstId: 1, lastId: 4, anchor: 'genesis' });
    expect(checkInvariants(core.db)).toEqual([]);
    // A JSONL export carries such text as written (escaped), so the file verifies too; CSV cannot.
    const text = async (format: 'jsonl' | 'csv') => {
      let out = '';
      for await (const chunk of exportAudit(core.auditQuery, {}, { format })) out += chunk;
      return out;
    };
    const jsonl = await text('jsonl');
    expect(jsonl).toContain('k-\\ud800-x');
    expect(await verifyExport([jsonl], 'jsonl', { expectContiguous: true })).toMatchObject({ ok: true, rows: 4, coverage: 'chain' });
    expect(await verifyExport([await text('csv')], 'csv')).toMatchObject({ ok: false, problemCount: 2, problems: [{ id: 1 }, { id: 3 }] });

    // A legacy row that was also altered is a problem like any other.
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare(`UPDATE audit SET detail = '{"forged":1}' WHERE id = 3`).run();
    expect(core.audit.verify()).toMatchObject({ ok: false, problems: [{ id: 3, kind: 'content' }], legacyText: [{ id: 1 }] });
  });

  it('the storage format itself: a surrogate written on its own decodes back exactly', () => {
    expect(decodeWtf8(Buffer.from('6bEDA0802D78', 'hex'))).toBe('k\ud800-x');
    expect(decodeWtf8(Buffer.from('EDB080EDA080', 'hex'))).toBe('\udc00\ud800');
    expect(decodeWtf8(Buffer.from('f09f9880', 'hex'))).toBe('\ud83d\ude00');
    expect(decodeWtf8(Buffer.from('ED9FBF', 'hex'))).toBe('\ud7ff'); // the last code point before the surrogates
  });
});
