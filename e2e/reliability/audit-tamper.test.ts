/**
 * Scenario 4c — the audit log changed while Gaffer was stopped. A real server process: work is
 * audited, the server is killed (a crash is not tampering) and stopped, the database is changed
 * with plain SQL (the append-only triggers dropped, a middle row edited, the newest rows deleted),
 * and the server is started again.
 *
 * Expected outcomes:
 * - after a kill -9 and a restart: `/status` ok, no storage_fault (the head record outside the
 *   database may be one commit behind: that is the crash window, not an alarm);
 * - after the tampering: the server starts, `/status` answers `ok: false` with
 *   `storage.state: "tampered"` and the reasons, one critical `storage_fault` inbox item, one
 *   `audit.tampered` audit row, the triggers are back; after the item is acknowledged, `/status` is
 *   ok again (that a further restart does not report the same findings again is a unit test:
 *   core/audit/integrity.test.ts).
 */
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { api, apiOk } from './lib/http';
import { figures } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, newOperatorToken, removeTempDirs, startServer, tempDir } from './lib/server';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

describe('the audit log changed while Gaffer was stopped', () => {
  it('a crash is not an alarm; dropped triggers, an edited row and deleted newest rows are, loudly', async () => {
    const opts = { dataDir: tempDir('audit-tamper'), port: await freePort(), operatorToken: newOperatorToken() };
    let s = await startServer(opts);
    for (let i = 0; i < 20; i++) await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: `t${i}`, role: 'dev' });
    await s.kill9();

    s = await startServer(opts);
    expect((await api(s.port, s.operatorToken, 'GET', '/status')).json).toMatchObject({ ok: true, storage: null });
    for (let i = 20; i < 30; i++) await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: `t${i}`, role: 'dev' });
    await s.stop();

    const db = new Database(s.dbPath);
    const newest = db.prepare('SELECT max(id) FROM audit').pluck().get() as number;
    db.exec(`DROP TRIGGER audit_no_update; DROP TRIGGER audit_no_delete;
      UPDATE audit SET detail = '{"title":"forged"}' WHERE type = 'task.create' AND subject = 'task:5';
      DELETE FROM audit WHERE id > ${newest - 2};`);
    db.close();

    const t0 = Date.now();
    s = await startServer(opts);
    const startMs = Date.now() - t0;
    const status = (await api(s.port, s.operatorToken, 'GET', '/status')).json;
    expect(status).toMatchObject({ ok: false, storage: { state: 'tampered' } });
    expect(status.storage.message).toMatch(/^The audit log was changed outside Gaffer: Found at start: the append-only triggers audit_no_update, audit_no_delete were missing or altered \(restored\)/);
    expect(status.storage.message).toMatch(new RegExp(`the newest 2 rows were deleted: .* names row ${newest}, the log ends at row ${newest - 2}`));
    expect(status.storage.message).toMatch(/row \d+: row content does not match its hash/);
    const items = (await apiOk(s.port, s.operatorToken, 'GET', '/inbox?kind=storage_fault')).json.items;
    expect(items).toEqual([expect.objectContaining({ kind: 'storage_fault', severity: 'critical', subject: 'audit:log' })]);
    const rows = (await apiOk(s.port, s.operatorToken, 'GET', '/audit?type=audit.tampered')).json.items;
    expect(rows).toHaveLength(1);
    expect(rows[0].detail.findings.map((f: { kind: string }) => f.kind)).toEqual(['triggers', 'head', 'chain']);

    await apiOk(s.port, s.operatorToken, 'POST', `/inbox/${items[0].id}/ack`, { note: 'restored from backup' });
    expect((await api(s.port, s.operatorToken, 'GET', '/status')).json).toMatchObject({ ok: true, storage: null });
    await s.stop();

    const check = new Database(s.dbPath, { readonly: true });
    const triggers = check.prepare(`SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'audit_no_%' ORDER BY name`).pluck().all();
    check.close();
    expect(triggers).toEqual(['audit_no_delete', 'audit_no_update']);

    figures('audit-tampered', { findings: rows[0].detail.findingCount, restartAfterTamperingMs: startMs });
  }, 120_000);
});
