/**
 * The audit log's check at start (integrity.ts): tampering done while Gaffer was stopped — with the
 * append-only triggers dropped, or bytes flipped in the file — is loud at the next start; a clean
 * restart, and a crash between a commit and the head record's write, are not.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestCore, tempDir, type TestCore } from '../tests/test-core';
import { HEAD_RECORD_BYTES, headRecordPath } from './head-record';
import { APPEND_ONLY_TRIGGERS, checkChainTail, damagedTriggers, INTEGRITY_SUBJECT, TAMPERED_TYPE } from './integrity';

const open: TestCore[] = [];
afterEach(() => {
  while (open.length) open.pop()!.close();
});

function start(dir: string): TestCore {
  const core = makeTestCore({}, dir);
  open.push(core);
  return core;
}

function stop(core: TestCore): void {
  open.splice(open.indexOf(core), 1);
  core.close();
}

/** A data directory whose log holds `rows` rows (plus whatever the core writes itself), Gaffer stopped. */
function stoppedWith(rows: number): { dir: string; dbPath: string; newest: number } {
  const dir = tempDir();
  const core = start(dir);
  for (let i = 0; i < rows; i++) core.audit.record({ type: 'test.row', actor: 'a', subject: `row-${i}`, detail: { i, text: `detail-${i}` } });
  const newest = core.audit.head().id;
  stop(core);
  return { dir, dbPath: path.join(dir, 'gaffer.db'), newest };
}

/** Changes the stopped database with plain SQL, as someone with sqlite3 would. */
function tamper(dbPath: string, sql: string): void {
  const db = new Database(dbPath);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

const DROP = 'DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;';
const RESTORE = `${APPEND_ONLY_TRIGGERS.audit_no_update}; ${APPEND_ONLY_TRIGGERS.audit_no_delete};`;

function tamperedRows(core: TestCore): Array<{ detail: { findings: Array<{ kind: string; id?: number; message: string }> } }> {
  return core.db
    .prepare<[string], { detail: string }>('SELECT detail FROM audit WHERE type = ? ORDER BY id')
    .all(TAMPERED_TYPE)
    .map((r) => ({ detail: JSON.parse(r.detail) }));
}

function faultItems(core: TestCore) {
  return core.inbox.list({ state: 'all', kind: 'storage_fault' }).items;
}

describe('the audit check at start', () => {
  it('a clean restart finds nothing, says ok and writes nothing', () => {
    const { dir, newest } = stoppedWith(30);
    const core = start(dir);
    expect(core.integrity.checkAtStart().findings).toEqual([]);
    expect(core.storageStatus()).toBeNull();
    expect(core.audit.head().id).toBe(newest);
    expect(faultItems(core)).toEqual([]);
  });

  it('the head record names the newest committed row after every commit, 0600', () => {
    const { dir, dbPath } = stoppedWith(3);
    const core = start(dir);
    core.audit.record({ type: 'test.row', actor: 'a', subject: 'more' });
    const file = headRecordPath(dbPath);
    const rec = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(rec).toEqual(core.audit.head());
    expect(fs.statSync(file).size).toBe(HEAD_RECORD_BYTES);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // A rolled-back write leaves it naming the committed row.
    expect(() =>
      core.store.write(() => {
        core.audit.append({ type: 'test.row', actor: 'a', subject: 'undone' });
        throw new Error('roll back');
      }),
    ).toThrow('roll back');
    core.store.write(() => core.tasks.list({}));
    expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toEqual(core.audit.head());
  });

  it('a byte flipped in the file, in a row near the tail, is found', () => {
    const { dir, dbPath } = stoppedWith(40);
    const bytes = fs.readFileSync(dbPath);
    // The detail is in the row alone (no index holds it): one bit of it, 'detail-33' → 'detail-23'.
    const at = bytes.indexOf('detail-33');
    expect(at).toBeGreaterThan(0);
    expect(bytes.indexOf('detail-33', at + 1)).toBe(-1);
    bytes[at + 7] = bytes[at + 7]! ^ 0x01;
    fs.writeFileSync(dbPath, bytes);
    const core = start(dir);
    const rows = tamperedRows(core);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.detail.findings).toEqual([expect.objectContaining({ kind: 'chain', message: expect.stringMatching(/does not match its hash/) })]);
    expect(core.storageStatus()).toMatchObject({ state: 'tampered', message: expect.stringMatching(/^The audit log was changed outside Gaffer: Found at start: row \d+: row content does not match its hash/) });
    expect(faultItems(core)).toEqual([expect.objectContaining({ kind: 'storage_fault', severity: 'critical', subject: INTEGRITY_SUBJECT, state: 'open' })]);
  });

  it('an edited row is found, and the dropped triggers are restored and reported', () => {
    const { dir, dbPath } = stoppedWith(20);
    tamper(dbPath, `${DROP} UPDATE audit SET actor = 'mallory' WHERE subject = 'row-10';`);
    const core = start(dir);
    const edited = core.db.prepare<[], number>(`SELECT id FROM audit WHERE subject = 'row-10'`).pluck().get()!;
    const [row] = tamperedRows(core);
    expect(row!.detail.findings).toEqual([
      { kind: 'triggers', message: expect.stringMatching(/^the append-only triggers audit_no_update, audit_no_delete were missing or altered \(restored\)/) },
      { kind: 'chain', id: edited, message: `row ${edited}: row content does not match its hash` },
    ]);
    expect(damagedTriggers(core.db)).toEqual([]);
    expect(() => core.db.prepare(`UPDATE audit SET actor = 'x' WHERE id = 1`).run()).toThrow(/append-only/);
  });

  it('a deleted middle row is found (triggers put back as they were)', () => {
    const { dir, dbPath } = stoppedWith(20);
    tamper(dbPath, `${DROP} DELETE FROM audit WHERE subject = 'row-7'; ${RESTORE}`);
    const core = start(dir);
    const [row] = tamperedRows(core);
    expect(row!.detail.findings).toEqual([{ kind: 'chain', id: expect.any(Number), message: expect.stringMatching(/^row \d+: gap: row \d+ missing$/) }]);
  });

  it('dropped triggers alone are restored and reported', () => {
    const { dir, dbPath } = stoppedWith(5);
    tamper(dbPath, 'DROP TRIGGER audit_no_delete; DROP TRIGGER audit_subjects_no_update;');
    const core = start(dir);
    expect(tamperedRows(core)[0]!.detail.findings).toEqual([{ kind: 'triggers', message: expect.stringMatching(/audit_no_delete, audit_subjects_no_update were missing/) }]);
    expect(faultItems(core)[0]!.title).toBe('The audit log’s append-only triggers had been removed');
    expect(damagedTriggers(core.db)).toEqual([]);
  });

  it('a trigger replaced by one that lets rows through is restored', () => {
    const { dir, dbPath } = stoppedWith(5);
    tamper(dbPath, 'DROP TRIGGER audit_no_update; CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT 1; END;');
    const core = start(dir);
    expect(tamperedRows(core)[0]!.detail.findings).toEqual([{ kind: 'triggers', message: expect.stringMatching(/audit_no_update were missing or altered/) }]);
    expect(() => core.db.prepare(`UPDATE audit SET actor = 'x' WHERE id = 1`).run()).toThrow(/append-only/);
  });

  it('deleting the newest rows is found through the head record', () => {
    const { dir, dbPath, newest } = stoppedWith(20);
    tamper(dbPath, `${DROP} DELETE FROM audit WHERE id > ${newest - 3}; ${RESTORE}`);
    const core = start(dir);
    expect(tamperedRows(core)[0]!.detail.findings).toEqual([
      { kind: 'head', id: newest, message: expect.stringMatching(new RegExp(`^the newest 3 rows were deleted: the head record .* names row ${newest}, the log ends at row ${newest - 3}$`)) },
    ]);
    expect(core.storageStatus()?.state).toBe('tampered');
  });

  it('a newest row rewritten with a valid hash is found through the head record', () => {
    const { dir, dbPath, newest } = stoppedWith(5);
    // Recomputing the hash keeps the chain valid; only the record outside the database tells.
    tamper(dbPath, `${DROP} UPDATE audit SET hash = '${'a'.repeat(64)}' WHERE id = ${newest}; ${RESTORE}`);
    const core = start(dir);
    const findings = tamperedRows(core)[0]!.detail.findings;
    expect(findings).toContainEqual({ kind: 'head', id: newest, message: expect.stringMatching(/its hash differs/) });
  });

  it('a head record deleted along with the rows is found', () => {
    const { dir, dbPath, newest } = stoppedWith(10);
    tamper(dbPath, `${DROP} DELETE FROM audit WHERE id > ${newest - 2}; ${RESTORE}`);
    fs.rmSync(headRecordPath(dbPath));
    const core = start(dir);
    expect(tamperedRows(core)[0]!.detail.findings).toEqual([{ kind: 'head', message: expect.stringMatching(/is gone, so rows deleted from the end of the log cannot be ruled out/) }]);
  });

  it('a new database beside the head record of one deleted to start afresh is not an alarm', () => {
    const { dir, dbPath } = stoppedWith(10);
    for (const f of ['', '-wal', '-shm', '-closed']) fs.rmSync(`${dbPath}${f}`, { force: true });
    const core = start(dir);
    expect(tamperedRows(core)).toEqual([]);
    expect(core.storageStatus()).toBeNull();
    expect(JSON.parse(fs.readFileSync(headRecordPath(dbPath), 'utf8'))).toEqual(core.audit.head());
  });

  it('a crash after a commit and before the head record was written is not an alarm', () => {
    const { dir, dbPath } = stoppedWith(10);
    const file = headRecordPath(dbPath);
    const core = start(dir);
    const before = fs.readFileSync(file);
    core.audit.record({ type: 'test.row', actor: 'a', subject: 'committed, record not yet written' });
    expect(fs.readFileSync(file).equals(before)).toBe(false);
    stop(core);
    fs.writeFileSync(file, before); // the state a crash right after the commit leaves
    const again = start(dir);
    expect(tamperedRows(again)).toEqual([]);
    expect(again.storageStatus()).toBeNull();
  });

  it('a finding is reported once; /status stays not ok until its item is acknowledged', () => {
    const { dir, dbPath } = stoppedWith(10);
    tamper(dbPath, `${DROP} UPDATE audit SET detail = '{"forged":1}' WHERE subject = 'row-4'; ${RESTORE}`);
    stop(start(dir));
    const core = start(dir);
    expect(tamperedRows(core)).toHaveLength(1);
    const [item] = faultItems(core);
    expect(item).toMatchObject({ state: 'open', count: 1 });
    expect(core.storageStatus()?.state).toBe('tampered');
    core.inbox.ack(item!.id, { actor: 'operator:test' });
    expect(core.storageStatus()).toBeNull();
    stop(core);
    const after = start(dir);
    expect(tamperedRows(after)).toHaveLength(1);
    expect(after.storageStatus()).toBeNull();
  });

  it('an unreadable head record is reported, then rewritten', () => {
    const { dir, dbPath } = stoppedWith(3);
    fs.writeFileSync(headRecordPath(dbPath), 'not a head record');
    const core = start(dir);
    expect(tamperedRows(core)[0]!.detail.findings).toEqual([{ kind: 'head', message: expect.stringMatching(/does not hold a head record/) }]);
    expect(JSON.parse(fs.readFileSync(headRecordPath(dbPath), 'utf8'))).toEqual(core.audit.head());
  });

  it('checks only the tail (and a sample) of a long log: what lies further back is left to GET /audit/verify', () => {
    const { dbPath } = stoppedWith(50);
    tamper(dbPath, `${DROP} UPDATE audit SET actor = 'mallory' WHERE subject IN ('row-3', 'row-45'); ${RESTORE}`);
    const db = new Database(dbPath, { readonly: true });
    try {
      const ids = db.prepare<[], number>(`SELECT id FROM audit WHERE subject IN ('row-3', 'row-45') ORDER BY id`).pluck().all();
      const r = checkChainTail(db, 10, 0);
      expect(r.problems.map((p) => p.id)).toEqual([ids[1]]);
      expect(r.to - r.from + 1).toBe(10);
      // The probe checks older rows with their predecessors: with every one probed, both are found.
      expect(checkChainTail(db, 10, 2000).problems.map((p) => p.id).sort((a, b) => a - b)).toEqual(ids);
    } finally {
      db.close();
    }
  });
});
