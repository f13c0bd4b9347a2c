/** `/inbox…` and `/notifications…` over real HTTP: shapes of PROTOCOL §8, typed errors that change nothing, masked secrets. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startApiTestServer, type ApiTestServer } from '../tests/api-server.testkit';
import { testRequester } from '../tests/http-request.testkit';
import { type TestCore } from '../../core/tests/test-core';

const TOKEN = 'op-secret-for-tests';
let api: ApiTestServer;
let core: TestCore;

beforeEach(async () => {
  api = await startApiTestServer(TOKEN);
  ({ core } = api);
});

afterEach(() => api.close());

const request = testRequester(() => api.port, TOKEN);
const call = (method: string, path: string, body?: unknown) => request(method, `/api/v1${path}`, { body });

const raise = (key: string, subject = 'run:r1') =>
  core.inbox.raise({ key, kind: 'needs_human', subject, about: { runId: 'r1', job: 'pay', slot: '2026-11-30' }, entry: { error: 'which account?' } })!;

function digest(): string {
  return JSON.stringify([core.db.prepare('SELECT * FROM inbox_items').all(), core.db.prepare(`SELECT value FROM settings WHERE key = 'notifications'`).all()]);
}

describe('/inbox', () => {
  it('lists open items with the PROTOCOL fields, acknowledges one with a note, bulk-acknowledges, snoozes', async () => {
    const a = raise('a');
    const b = raise('b', 'run:r2');
    const list = await call('GET', '/inbox?state=open');
    expect(list.status).toBe(200);
    expect(list.body.next).toBeNull();
    for (const i of list.body.items) expect(Object.keys(i)).toEqual(expect.arrayContaining(['id', 'kind', 'severity', 'subject', 'title', 'detail', 'at', 'state']));
    expect((await call('GET', '/inbox/counts')).body.counts).toMatchObject({ open: 2, critical: 2 });
    const acked = await call('POST', `/inbox/${a.id}/ack`, { note: 'paid from the main account' });
    expect(acked.body.item).toMatchObject({ state: 'acked', ackedBy: 'operator:http', note: 'paid from the main account' });
    const snoozed = await call('POST', `/inbox/${b.id}/snooze`, { until: new Date(core.clock.now() + 60_000).toISOString() });
    expect(snoozed.body.item.state).toBe('snoozed');
    expect((await call('GET', '/inbox')).body.items).toEqual([]);
    expect((await call('GET', '/inbox?state=all')).body.items).toHaveLength(2);
    const bulk = await call('POST', '/inbox/ack', { ids: [a.id, b.id] });
    expect(bulk.body).toMatchObject({ skipped: [a.id] });
    expect(bulk.body.acked.map((i: any) => i.id)).toEqual([b.id]);
    expect((await call('GET', `/inbox/${b.id}`)).body.item.state).toBe('acked');
  });

  it('bad input is a 400 naming the field and changes nothing; unknown ids are 404', async () => {
    const a = raise('a');
    const before = digest();
    const bad: Array<[string, string, unknown, RegExp]> = [
      ['GET', '/inbox?state=closed', undefined, /state/],
      ['GET', '/inbox?limit=501', undefined, /limit/],
      ['GET', '/inbox?kind=nope', undefined, /kind/],
      ['POST', `/inbox/${a.id}/ack`, { note: 'x'.repeat(2001) }, /note/],
      ['POST', `/inbox/${a.id}/ack`, { nope: true }, /nope|unrecognized/i],
      ['POST', `/inbox/${a.id}/snooze`, { until: 'soon' }, /until/],
      ['POST', '/inbox/ack', { ids: [] }, /ids/],
      ['POST', '/inbox/abc/ack', {}, /id/],
    ];
    for (const [method, path, body, msg] of bad) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body.error).toMatchObject({ code: 'bad_request', message: expect.stringMatching(msg) });
    }
    expect((await call('POST', '/inbox/999/ack', {})).status).toBe(404);
    expect((await call('POST', '/inbox/ack', { ids: [a.id, 999] })).status).toBe(404);
    expect(digest()).toBe(before);
  });
});

describe('/notifications', () => {
  it('PUT replaces the configuration, GET shows it with URLs masked; bad input changes nothing', async () => {
    const put = await call('PUT', '/notifications', { webhooks: [{ url: 'https://hooks.slack.com/services/T1/B2/sekrit', events: ['needs_human', 'dead_man'], format: 'slack' }], reason: 'phone alerts' });
    expect(put.status).toBe(200);
    expect(put.body.webhooks[0]).toMatchObject({ url: 'https://hooks.slack.com/serv…', events: ['needs_human', 'dead_man'], format: 'slack', enabled: true, lastDelivery: null });
    const got = await call('GET', '/notifications');
    expect(JSON.stringify(got.body)).not.toContain('sekrit');
    expect(got.body.desktop.kinds.length).toBeGreaterThan(0);
    const before = digest();
    const bad = await call('PUT', '/notifications', { webhooks: [{ url: 'javascript:alert(1)', events: ['needs_human'] }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toMatch(/webhooks\.0\.url/);
    expect((await call('PUT', '/notifications', { webhooks: [], extra: 1 })).status).toBe(400);
    expect(digest()).toBe(before);
  });

  it('deliveries are listed and a test of an unknown webhook is a 404', async () => {
    expect((await call('GET', '/notifications/deliveries?status=dead')).body).toEqual({ items: [], next: null });
    expect((await call('GET', '/notifications/deliveries?status=lost')).status).toBe(400);
    expect((await call('POST', '/notifications/test', { webhookId: 'wh_nope' })).status).toBe(404);
    expect((await call('POST', '/notifications/test', {})).body).toEqual({ results: [] });
    expect((await call('POST', '/notifications/deliveries/5/retry', {})).status).toBe(404);
  });
});
