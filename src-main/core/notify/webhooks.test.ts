/**
 * Webhook deliveries against a real receiver on 127.0.0.1: retries with backoff, the dead-letter
 * state, formats, masking of secrets, the Test action, and a durable outbox across a restart.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCore } from '../create-core';
import { until } from '../tests/jobs.testkit';
import { makeTestCore, type TestCore } from '../tests/test-core';
import type { Occurrence } from '../inbox/inbox';
import { BACKOFF_S, MAX_ATTEMPTS } from './webhooks';
import { maskUrl, webhookRequest } from './webhook-format';

interface Received {
  path: string;
  body: any;
  headers: http.IncomingHttpHeaders;
}

/** A receiver that answers each request with the next status of `script` (then the last one). */
async function receiver(script: number[]): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const server = http.createServer((req, res) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      got.push({ path: req.url ?? '', body: JSON.parse(data), headers: req.headers });
      res.writeHead(script[Math.min(got.length - 1, script.length - 1)]!).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

let core: TestCore | undefined;
let rx: Awaited<ReturnType<typeof receiver>> | undefined;
afterEach(async () => {
  await core?.attention.webhooks.settled();
  core?.close();
  core = undefined;
  await rx?.close();
  rx = undefined;
});

const operator = { actor: 'operator:test' };
const held = (key = 'hold:run:r1:1'): Occurrence => ({ key, kind: 'needs_human', subject: 'run:r1', about: { runId: 'r1', job: 'refunds', slot: '2026-11-30' }, entry: { error: 'approve 40 EUR?' } });

function audit(c: TestCore, prefix: string): Array<{ type: string; subject: string; detail: any }> {
  return (c.db.prepare(`SELECT type, subject, detail FROM audit WHERE type LIKE ? ORDER BY id`).all(`${prefix}%`) as Array<{ type: string; subject: string; detail: string }>).map((r) => ({ ...r, detail: JSON.parse(r.detail) }));
}

describe('deliveries', () => {
  it('a receiver that fails twice then succeeds: retried after 5 s and 30 s, each attempt audited', async () => {
    rx = await receiver([500, 503, 200]);
    core = makeTestCore();
    core.start();
    const view = core.attention.notifications.put({ webhooks: [{ url: `${rx.url}/hook/secret-token-123`, events: ['needs_human'] }], ...operator });
    const hookId = view.webhooks[0]!.id;
    const item = core.inbox.raise(held())!;
    await until(() => rx!.got.length === 1, 'first attempt');
    await until(() => core!.attention.webhooks.list().items[0]?.attempts === 1, 'first attempt recorded');
    expect(core.attention.webhooks.list().items[0]).toMatchObject({ status: 'pending', attempts: 1, lastStatus: 500, lastError: 'the receiver answered HTTP 500' });
    core.clock.advance(BACKOFF_S[0] * 1000 - 1);
    await new Promise((r) => setTimeout(r, 30));
    expect(rx.got).toHaveLength(1); // not before its time
    core.clock.advance(1);
    await until(() => core!.attention.webhooks.list().items[0]?.attempts === 2, 'second attempt');
    core.clock.advance(BACKOFF_S[1] * 1000);
    await until(() => core!.attention.webhooks.list().items[0]?.status === 'delivered', 'delivered');
    expect(rx.got).toHaveLength(3);
    expect(rx.got[2]!.path).toBe('/hook/secret-token-123');
    expect(rx.got[2]!.body).toMatchObject({ id: item.id, kind: 'needs_human', title: 'refunds 2026-11-30 needs a human', subject: 'run:r1', at: item.at, severity: 'critical', count: 1 });
    expect(audit(core, 'notify.').map((a) => [a.type, a.subject, a.detail.attempt, a.detail.status])).toEqual([
      ['notify.retry', `webhook:${hookId}`, 1, 500],
      ['notify.retry', `webhook:${hookId}`, 2, 503],
      ['notify.delivered', `webhook:${hookId}`, 3, 200],
    ]);
    // The audit never holds the secret.
    expect(JSON.stringify(core.db.prepare('SELECT detail FROM audit').all())).not.toContain('secret-token-123');
    expect(core.attention.notifications.view().webhooks[0]!.lastDelivery).toMatchObject({ status: 'delivered' });
  });

  it('gives up after the last retry (dead), keeps it listed, and a retry by hand sends it again', async () => {
    rx = await receiver([500]);
    core = makeTestCore();
    core.start();
    core.attention.notifications.put({ webhooks: [{ url: `${rx.url}/h`, events: ['needs_human'] }], ...operator });
    core.inbox.raise(held());
    for (let i = 1; i <= MAX_ATTEMPTS; i++) {
      await until(() => core!.attention.webhooks.list().items[0]?.attempts === i, `attempt ${i}`);
      if (i < MAX_ATTEMPTS) core.clock.advance(BACKOFF_S[i - 1]! * 1000);
    }
    const d = core.attention.webhooks.list().items[0]!;
    expect(d).toMatchObject({ status: 'dead', attempts: MAX_ATTEMPTS, nextAt: null });
    expect(core.attention.webhooks.list({ status: 'dead' }).items).toHaveLength(1);
    expect(audit(core, 'notify.dead')).toHaveLength(1);
    expect(() => core!.attention.webhooks.retry(d.id, { actor: 'x', extra: 1 })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    rx.got.length = 0;
    core.attention.webhooks.retry(d.id, operator);
    await until(() => rx!.got.length === 1, 'resent');
    expect(() => core!.attention.webhooks.retry(d.id, operator)).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
  });

  it('a receiver whose reply is huge: Gaffer reads at most 64 KiB of it and drops the connection; delivered by its status', async () => {
    // The receiver streams 64 MiB and counts what it could hand to the socket before it closed:
    // what Gaffer read, plus what the loopback socket buffers held (a few MiB at most).
    const TOTAL = 64 * 1024 * 1024;
    let written = 0;
    let closed = false;
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(TOTAL) });
        res.on('close', () => (closed = true));
        const chunk = Buffer.alloc(64 * 1024, 0x78);
        const pump = () => {
          while (written < TOTAL && !res.destroyed) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          if (!res.destroyed) res.end();
        };
        pump();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      core = makeTestCore();
      core.start();
      core.attention.notifications.put({ webhooks: [{ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/big`, events: ['needs_human'] }], ...operator });
      core.inbox.raise(held());
      await until(() => core!.attention.webhooks.list().items[0]?.status === 'delivered', 'delivered');
      expect(core.attention.webhooks.list().items[0]).toMatchObject({ attempts: 1, lastStatus: 200, lastError: null });
      await until(() => closed, 'the connection dropped');
      expect(written).toBeLessThan(TOTAL / 4);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('a 404 will not change: dead at once, without retries', async () => {
    rx = await receiver([404]);
    core = makeTestCore();
    core.start();
    core.attention.notifications.put({ webhooks: [{ url: `${rx.url}/gone`, events: ['needs_human'] }], ...operator });
    core.inbox.raise(held());
    await until(() => core!.attention.webhooks.list().items[0]?.status === 'dead', 'dead');
    expect(core.attention.webhooks.list().items[0]).toMatchObject({ attempts: 1, lastStatus: 404 });
  });

  it('only the kinds a webhook lists, only enabled webhooks; folded occurrences send nothing more', async () => {
    rx = await receiver([200]);
    core = makeTestCore();
    core.start();
    core.attention.notifications.put({
      webhooks: [
        { url: `${rx.url}/a`, events: ['dead_man'] },
        { url: `${rx.url}/b`, events: ['needs_human', 'dead_man'] },
        { url: `${rx.url}/c`, events: ['needs_human'], enabled: false },
      ],
      ...operator,
    });
    core.inbox.raise(held('k1'));
    core.inbox.raise(held('k2')); // folds into the same item
    await until(() => rx!.got.length >= 1, 'sent');
    await core.attention.webhooks.settled();
    expect(rx.got.map((g) => g.path)).toEqual(['/b']);
    // Sent after both occurrences were folded in: the body says so.
    expect(rx.got[0]!.body.count).toBe(2);
  });

  it('a pending delivery survives a restart (durable outbox) and is sent by the next start', async () => {
    rx = await receiver([200]);
    core = makeTestCore();
    core.attention.notifications.put({ webhooks: [{ url: `${rx.url}/x`, events: ['needs_human'] }], ...operator });
    core.inbox.raise(held()); // not started: nothing is sent
    expect(rx.got).toEqual([]);
    const dir = core.dir;
    core.close();
    const again = createCore({ clock: core.clock, dataDir: dir });
    core = Object.assign(again, { clock: core.clock, dir }) as TestCore;
    core.start();
    await until(() => core!.attention.webhooks.list().items[0]?.status === 'delivered', 'delivered after restart');
    expect(rx.got).toHaveLength(1);
  });
});

describe('settings', () => {
  it('URLs are shown masked; a PUT that names a webhook without its url keeps the stored one; bad input changes nothing', () => {
    core = makeTestCore();
    const v = core.attention.notifications.put({ webhooks: [{ name: 'phone', url: 'https://ntfy.sh/gaffer-alerts-7f3k9', events: ['needs_human'], format: 'ntfy' }], desktop: { kinds: ['needs_human'], quietHours: { start: '22:00', end: '07:00' } }, ...operator });
    expect(v.webhooks[0]).toMatchObject({ name: 'phone', url: 'https://ntfy.sh/gaff…', format: 'ntfy', enabled: true });
    expect(v.desktop).toEqual({ kinds: ['needs_human'], quietHours: { start: '22:00', end: '07:00' } });
    const id = v.webhooks[0]!.id;
    const kept = core.attention.notifications.put({ webhooks: [{ id, events: ['needs_human', 'budget'] }], ...operator });
    expect(kept.webhooks[0]).toMatchObject({ id, events: ['needs_human', 'budget'] });
    expect(core.attention.notifications.stored().webhooks[0]!.url).toBe('https://ntfy.sh/gaffer-alerts-7f3k9');
    expect(kept.desktop.kinds).toEqual(['needs_human']); // left out: kept
    const before = JSON.stringify(core.attention.notifications.stored());
    const bad: Array<[unknown, RegExp]> = [
      [{ webhooks: [{ url: 'ftp://x', events: ['needs_human'] }] }, /webhooks\.0\.url/],
      [{ webhooks: [{ url: 'https://x.test/h', events: [] }] }, /webhooks\.0\.events/],
      [{ webhooks: [{ url: 'https://x.test/h', events: ['nope'] }] }, /webhooks\.0\.events/],
      [{ webhooks: [{ events: ['needs_human'] }] }, /webhooks\.0\.url/],
      [{ webhooks: [{ id: 'wh_missing', events: ['needs_human'] }] }, /there is no webhook wh_missing/],
      [{ webhooks: [{ id, events: ['needs_human'] }, { id, events: ['budget'] }] }, /listed twice/],
      [{ webhooks: [], desktop: { kinds: [], quietHours: { start: '25:00', end: '07:00' } } }, /desktop\.quietHours\.start/],
      [{ webhooks: [], desktop: { kinds: [], quietHours: { start: '22:00', end: '07:00', timezone: 'Mars/Olympus' } } }, /timezone/],
    ];
    for (const [input, msg] of bad) {
      expect(() => core!.attention.notifications.put({ ...(input as object), ...operator })).toThrow(expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(msg) }));
    }
    expect(JSON.stringify(core.attention.notifications.stored())).toBe(before);
    const rows = audit(core, 'notifications.update');
    expect(rows).toHaveLength(2);
    expect(JSON.stringify(rows)).not.toContain('7f3k9');
  });

  it('a URL with user:pass@ is refused at save, naming the field and why; nothing is stored', () => {
    core = makeTestCore();
    for (const url of ['https://alice:s3cret@hooks.example.test/h', 'http://alice@127.0.0.1:9000/h', 'https://:pw@x.test/']) {
      expect(() => core!.attention.notifications.put({ webhooks: [{ url, events: ['needs_human'] }], ...operator })).toThrow(
        expect.objectContaining({ code: 'bad_request', message: expect.stringMatching(/webhooks\.0\.url.*user name or password/) }),
      );
    }
    expect(core.attention.notifications.stored().webhooks).toEqual([]);
    expect(audit(core, 'notifications.update')).toEqual([]);
    // The secret in the path or the query is fine (Slack, ntfy).
    core.attention.notifications.put({ webhooks: [{ url: 'https://ntfy.example.test/topic?auth=tok', events: ['needs_human'] }], ...operator });
    expect(core.attention.notifications.stored().webhooks).toHaveLength(1);
  });

  it('masking shows the host and at most a third of the path, never user info', () => {
    expect(maskUrl('https://hooks.slack.com/services/T000/B000/XXXXXXXX')).toBe('https://hooks.slack.com/serv…');
    expect(maskUrl('http://user:pw@127.0.0.1:9000/h?token=abc')).toBe('http://127.0.0.1:9000/h?t…');
    expect(maskUrl('https://example.test/')).toBe('https://example.test/');
    expect(maskUrl('not a url')).toBe('(invalid URL)');
  });
});

describe('formats', () => {
  const n = { id: 7, kind: 'dead_man' as const, severity: 'critical' as const, subject: 'job:j1', title: 'sync: 2 slots did not start <x>', detail: 'Slots a, b.', at: '2026-11-30T09:00:00.000Z', lastAt: '2026-11-30T09:15:00.000Z', count: 2, state: 'open' as const, url: 'http://127.0.0.1:7311/#/inbox?item=7' };

  it('every body carries id, kind, severity, title, subject, at and the console link', () => {
    for (const f of ['json', 'slack', 'ntfy'] as const) {
      const body = JSON.parse(webhookRequest('https://example.test/topic', f, n).body);
      expect(body).toMatchObject({ id: 7, kind: 'dead_man', severity: 'critical', title: n.title, subject: 'job:j1', at: n.at, url: n.url });
    }
  });

  it('slack: mrkdwn text, escaped; ntfy: posted to the server root with the topic and a priority', () => {
    expect(JSON.parse(webhookRequest('https://hooks.slack.com/services/x', 'slack', n).body).text).toBe(
      ':rotating_light: *sync: 2 slots did not start &lt;x&gt;* (2 occurrences)\nSlots a, b.\n<http://127.0.0.1:7311/#/inbox?item=7|Open in Gaffer>',
    );
    const ntfy = webhookRequest('https://ntfy.example.test/base/my-topic?auth=tok', 'ntfy', n);
    expect(ntfy.url).toBe('https://ntfy.example.test/base?auth=tok');
    expect(JSON.parse(ntfy.body)).toMatchObject({ topic: 'my-topic', message: 'Slots a, b.', priority: 5, tags: ['dead_man'], click: n.url });
    // A phone's notification opens the item: ntfy's Click header.
    expect(ntfy.headers).toEqual({ Click: n.url });
  });
});

describe('the Test action', () => {
  it('posts a test notice to each webhook now and reports the outcome, audited; no delivery row', async () => {
    rx = await receiver([204]);
    const down = await receiver([500]);
    core = makeTestCore();
    core.start();
    const v = core.attention.notifications.put({ webhooks: [{ url: `${rx.url}/ok`, events: ['budget'] }, { url: `${down.url}/no`, events: ['budget'], format: 'slack' }], ...operator });
    const results = await core.attention.webhooks.test({ ...operator });
    expect(results.map((r) => [r.webhookId, r.ok, r.status])).toEqual([
      [v.webhooks[0]!.id, true, 204],
      [v.webhooks[1]!.id, false, 500],
    ]);
    expect(rx.got[0]!.body).toMatchObject({ kind: 'test', subject: 'gaffer:test', test: true });
    expect(core.attention.webhooks.list().items).toEqual([]);
    expect(audit(core, 'notify.test').map((a) => a.detail.ok)).toEqual([true, false]);
    await expect(core.attention.webhooks.test({ webhookId: 'wh_nope', ...operator })).rejects.toMatchObject({ code: 'not_found' });
    await down.close();
  });
});
