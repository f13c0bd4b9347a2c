import { describe, expect, it } from 'vitest';
import { ConsoleCallError, type ConsoleEvent, type GafferBridge } from '../../src-main/common/console-api';
import {
  adoptTokenFromFragment,
  BEARER_SUBPROTOCOL_PREFIX,
  createBrowserConsoleApi,
  EVENTS_SUBPROTOCOL,
  exportQuery,
  filenameFromDisposition,
  TOKEN_STORAGE_KEY,
  type BrowserEnv,
  type WebSocketLike,
} from './browser';
import { createElectronConsoleApi } from './electron-ipc';

class MemoryStorage {
  map = new Map<string, string>();
  getItem(k: string) {
    return this.map.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.map.set(k, v);
  }
  removeItem(k: string) {
    this.map.delete(k);
  }
}

class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  protocol = '';
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  sent: string[] = [];
  closed: number | null = null;
  constructor(
    readonly url: string,
    readonly protocols?: string | string[],
  ) {
    FakeSocket.all.push(this);
  }
  send(d: string) {
    this.sent.push(d);
  }
  close(code = 1000) {
    this.closed = code;
  }
  // test helpers
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  frame(f: unknown) {
    this.onmessage?.({ data: JSON.stringify(f) });
  }
  drop(code = 1006) {
    this.readyState = 3;
    this.onclose?.({ code, reason: '' });
  }
}

interface Harness {
  env: BrowserEnv;
  storage: MemoryStorage;
  replaced: string[];
  fetches: Array<{ url: string; init: RequestInit | undefined }>;
  timers: Array<{ fn: () => void; ms: number }>;
  downloads: Array<{ filename: string; text: string; type: string }>;
}

function harness(opts: { hash?: string; stored?: string; respond?: (url: string, init?: RequestInit) => Response | Promise<Response> } = {}): Harness {
  FakeSocket.all = [];
  const storage = new MemoryStorage();
  if (opts.stored) storage.setItem(TOKEN_STORAGE_KEY, opts.stored);
  const h: Harness = {
    storage,
    replaced: [],
    fetches: [],
    timers: [],
    downloads: [],
    env: undefined as unknown as BrowserEnv,
  };
  h.env = {
    location: { hash: opts.hash ?? '', pathname: '/', search: '', host: '127.0.0.1:7311', protocol: 'http:' },
    history: { replaceState: (_d: unknown, _u: string, url?: string | URL | null) => void h.replaced.push(String(url)) },
    storage,
    fetch: (async (url: string, init?: RequestInit) => {
      h.fetches.push({ url, init });
      if (!opts.respond) throw new Error('no network in tests');
      return opts.respond(url, init);
    }) as typeof fetch,
    WebSocket: FakeSocket,
    setTimeout: (fn, ms) => h.timers.push({ fn, ms }),
    clearTimeout: () => {},
    saveDownload: (parts, filename, type) => h.downloads.push({ filename, type, text: Buffer.concat(parts.map((p) => Buffer.from(p))).toString('utf8') }),
    random: () => 0.5,
  };
  return h;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('token bootstrap from the URL fragment', () => {
  it('stores #token=… in sessionStorage and strips it from the address bar', () => {
    const h = harness({ hash: '#token=gfo_abc' });
    expect(adoptTokenFromFragment(h.env)).toBe('gfo_abc');
    expect(h.storage.getItem(TOKEN_STORAGE_KEY)).toBe('gfo_abc');
    expect(h.replaced).toEqual(['/']);
  });

  it('keeps other fragment parameters and hash routes', () => {
    const a = harness({ hash: '#token=t1&view=jobs' });
    adoptTokenFromFragment(a.env);
    expect(a.replaced).toEqual(['/#view=jobs']);
    const b = harness({ hash: '#/audit?token=t2&x=1' });
    expect(adoptTokenFromFragment(b.env)).toBe('t2');
    expect(b.replaced).toEqual(['/#/audit?x=1']);
  });

  it('leaves the URL alone without a token, and falls back to the stored one', () => {
    const h = harness({ hash: '#/jobs', stored: 'earlier' });
    expect(adoptTokenFromFragment(h.env)).toBe('earlier');
    expect(h.replaced).toEqual([]);
    const empty = harness({ hash: '#token=' });
    expect(adoptTokenFromFragment(empty.env)).toBeNull();
    expect(empty.replaced).toEqual(['/']);
  });
});

describe('browser ConsoleApi: calls', () => {
  it('POSTs JSON with the bearer token (never in the URL) and unwraps the reply', async () => {
    const h = harness({ hash: '#token=secret', respond: () => json({ ok: true, value: { onlineInstances: 2 } }) });
    const api = createBrowserConsoleApi(h.env);
    expect(api.shell).toBe('browser');
    const v = await api.call('dashboard.get', {});
    expect(v).toEqual({ onlineInstances: 2 });
    const { url, init } = h.fetches[0]!;
    expect(url).toBe('/console/rpc/dashboard.get');
    expect(url).not.toContain('secret');
    expect(init?.method).toBe('POST');
    expect((init?.headers as Record<string, string>).authorization).toBe('Bearer secret');
    expect(init?.credentials).toBe('omit');
    expect(init?.body).toBe('{}');
  });

  it('error replies become ConsoleCallError with the stable code', async () => {
    const h = harness({ stored: 't', respond: () => json({ ok: false, error: { code: 'invalid_transition', status: 422, message: 'no' } }, 422) });
    const api = createBrowserConsoleApi(h.env);
    const err = await api.call('tasks.cancel', { taskId: 1, reason: 'r' }).catch((e) => e);
    expect(err).toBeInstanceOf(ConsoleCallError);
    expect(err.code).toBe('invalid_transition');
  });

  it('server-level errors ({error}) and unreadable bodies are typed too', async () => {
    const a = createBrowserConsoleApi(harness({ stored: 't', respond: () => json({ error: { code: 'forbidden', status: 403, message: 'host' } }, 403) }).env);
    expect((await a.call('dashboard.get', {}).catch((e) => e)).code).toBe('forbidden');
    const b = createBrowserConsoleApi(harness({ stored: 't', respond: () => new Response('<html>', { status: 502 }) }).env);
    expect((await b.call('dashboard.get', {}).catch((e) => e)).code).toBe('internal');
  });

  it('no token → unauthorized without a request; network failure → unavailable', async () => {
    const h = harness();
    const api = createBrowserConsoleApi(h.env);
    expect(api.hasToken()).toBe(false);
    const err = await api.call('dashboard.get', {}).catch((e) => e);
    expect(err.code).toBe('unauthorized');
    expect(err.message).toContain('#token=');
    expect(h.fetches).toEqual([]);
    const down = createBrowserConsoleApi(harness({ stored: 't' }).env);
    expect((await down.call('dashboard.get', {}).catch((e) => e)).code).toBe('unavailable');
  });
});

describe('browser ConsoleApi: live events', () => {
  const task = (id: number): ConsoleEvent => ({ type: 'task.changed', taskId: id, role: 'dev', status: 'backlog' });

  it('opens one socket with the bearer subprotocol, delivers events, reports the connection', () => {
    const h = harness({ stored: 'gfo_tok' });
    const api = createBrowserConsoleApi(h.env);
    const states: boolean[] = [];
    api.onConnectionChange!((c) => states.push(c));
    const a: ConsoleEvent[] = [];
    const b: ConsoleEvent[] = [];
    const offA = api.subscribe((e) => a.push(e));
    api.subscribe((e) => b.push(e));
    expect(FakeSocket.all).toHaveLength(1);
    const ws = FakeSocket.all[0]!;
    expect(ws.url).toBe('ws://127.0.0.1:7311/console/events');
    expect(ws.protocols).toEqual([EVENTS_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}gfo_tok`]);
    ws.open();
    expect(ws.sent).toEqual([]);
    ws.frame({ type: 'ready' });
    expect(states).toEqual([true]);
    ws.frame({ type: 'events', events: [task(1), task(2)] });
    expect(a).toEqual([task(1), task(2)]);
    expect(b).toEqual([task(1), task(2)]);
    offA();
    ws.frame({ type: 'events', events: [task(3)] });
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(3);
  });

  it('reconnects with backoff after a drop, and stops when nobody listens', () => {
    const h = harness({ stored: 'tok' });
    const api = createBrowserConsoleApi(h.env);
    const states: boolean[] = [];
    api.onConnectionChange!((c) => states.push(c));
    const off = api.subscribe(() => {});
    FakeSocket.all[0]!.open();
    FakeSocket.all[0]!.frame({ type: 'ready' });
    FakeSocket.all[0]!.drop();
    expect(states).toEqual([true, false]);
    expect(h.timers).toHaveLength(1);
    h.timers[0]!.fn();
    expect(FakeSocket.all).toHaveLength(2);
    FakeSocket.all[1]!.drop();
    expect(h.timers[1]!.ms).toBeGreaterThan(h.timers[0]!.ms); // backoff grows
    h.timers[1]!.fn();
    FakeSocket.all[2]!.frame({ type: 'ready' });
    off();
    expect(FakeSocket.all[2]!.closed).toBe(1000);
    expect(states.at(-1)).toBe(false);
  });

  it('tokens a subprotocol cannot carry go in a first auth frame; 4401 raises an alert and stops', () => {
    const h = harness({ stored: 'has space' });
    const api = createBrowserConsoleApi(h.env);
    const got: ConsoleEvent[] = [];
    api.subscribe((e) => got.push(e));
    const ws = FakeSocket.all[0]!;
    expect(ws.protocols).toEqual([EVENTS_SUBPROTOCOL]);
    ws.open();
    expect(JSON.parse(ws.sent[0]!)).toEqual({ type: 'auth', token: 'has space' });
    ws.drop(4401);
    expect(got).toEqual([expect.objectContaining({ type: 'alert', level: 'critical', title: 'Not signed in' })]);
    expect(h.timers).toEqual([]);
  });

  it('signing in with a pasted token keeps it in this tab only and opens the events', async () => {
    const h = harness({ respond: () => json({ ok: true, value: { n: 1 } }) });
    const api = createBrowserConsoleApi(h.env);
    api.subscribe(() => {});
    expect(FakeSocket.all).toEqual([]);
    api.signIn!('  gfo_pasted  ');
    expect(h.storage.getItem(TOKEN_STORAGE_KEY)).toBe('gfo_pasted');
    expect(h.replaced).toEqual([]);
    expect(FakeSocket.all).toHaveLength(1);
    expect(FakeSocket.all[0]!.protocols).toEqual([EVENTS_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}gfo_pasted`]);
    await api.call('dashboard.get', {});
    expect(h.fetches[0]!.url).not.toContain('gfo_pasted');
    expect((h.fetches[0]!.init!.headers as Record<string, string>).authorization).toBe('Bearer gfo_pasted');
  });

  it('does not connect without a token', () => {
    const api = createBrowserConsoleApi(harness().env);
    api.subscribe(() => {});
    expect(FakeSocket.all).toEqual([]);
  });
});

describe('browser ConsoleApi: export', () => {
  it('streams the download, counting rows, and reports progress', async () => {
    const body = '{"id":1}\n{"id":2}\n{"id":3}\n';
    const h = harness({
      stored: 't',
      respond: () =>
        new Response(body, {
          headers: { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-disposition': 'attachment; filename="gaffer-audit-x.jsonl"' },
        }),
    });
    const api = createBrowserConsoleApi(h.env);
    const progress: Array<{ rows: number; done: boolean }> = [];
    const r = await api.exportAudit({ format: 'jsonl', types: ['lock.claim', 'task.create'], actor: 'operator:browser' }, (p) => progress.push(p));
    expect(r).toEqual({ file: 'gaffer-audit-x.jsonl', rows: 3 });
    expect(h.fetches[0]!.url).toBe('/console/export?format=jsonl&type=lock.claim&type=task.create&actor=operator%3Abrowser');
    expect((h.fetches[0]!.init?.headers as Record<string, string>).authorization).toBe('Bearer t');
    expect(h.downloads).toEqual([{ filename: 'gaffer-audit-x.jsonl', type: 'application/x-ndjson; charset=utf-8', text: body }]);
    expect(progress.at(-1)).toEqual({ rows: 3, bytes: body.length, done: true });
  });

  it('CSV rows exclude the header; errors are typed', async () => {
    const csv = 'id,at\r\n1,x\r\n2,y\r\n';
    const ok = harness({ stored: 't', respond: () => new Response(csv, { headers: { 'content-type': 'text/csv' } }) });
    expect(await createBrowserConsoleApi(ok.env).exportAudit({ format: 'csv' }, () => {})).toEqual({ file: 'gaffer-audit.csv', rows: 2 });
    const bad = harness({ stored: 't', respond: () => json({ ok: false, error: { code: 'bad_request', status: 400, message: 'bad filter' } }, 400) });
    expect((await createBrowserConsoleApi(bad.env).exportAudit({ format: 'csv' }, () => {}).catch((e) => e)).code).toBe('bad_request');
  });

  it('helpers', () => {
    expect(exportQuery({ format: 'csv', from: '2026-01-01T00:00:00Z', after: 10 })).toBe('format=csv&from=2026-01-01T00%3A00%3A00Z&after=10');
    expect(filenameFromDisposition('attachment; filename="a.csv"', 'x')).toBe('a.csv');
    expect(filenameFromDisposition(null, 'x')).toBe('x');
  });
});

describe('Electron ConsoleApi over the preload bridge', () => {
  it('unwraps replies into values or ConsoleCallError', async () => {
    const listeners: Array<(e: ConsoleEvent) => void> = [];
    const bridge: GafferBridge = {
      shell: 'electron',
      call: async (method) =>
        method === 'dashboard.get' ? { ok: true, value: { onlineInstances: 1 } } : { ok: false, error: { code: 'not_found', status: 404, message: 'nope' } },
      subscribe: (l) => {
        listeners.push(l);
        return () => listeners.splice(listeners.indexOf(l), 1);
      },
      exportAudit: async () => ({ ok: true, value: null }),
      onNavigate: () => () => {},
    };
    const api = createElectronConsoleApi(bridge);
    expect(api.shell).toBe('electron');
    expect(await api.call('dashboard.get', {})).toEqual({ onlineInstances: 1 });
    const err = await api.call('tasks.get', { taskId: 1 }).catch((e) => e);
    expect(err).toBeInstanceOf(ConsoleCallError);
    expect(err.code).toBe('not_found');
    expect(await api.exportAudit({ format: 'jsonl' }, () => {})).toBeNull();
    const off = api.subscribe(() => {});
    expect(listeners).toHaveLength(1);
    off();
    expect(listeners).toHaveLength(0);
  });
});
