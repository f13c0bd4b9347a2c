/**
 * ConsoleApi for the browser (headless mode): HTTP calls and a WebSocket for live events, to the
 * headless server that served this page (same origin).
 *
 * 1. The operator token arrives once in the URL fragment (`/#token=…`, printed by gaffer; never
 *    sent to any server), is kept in sessionStorage (this tab only, gone when it closes) and is
 *    removed from the address bar at once (`history.replaceState`), so it is not bookmarked,
 *    shared in a screenshot or left in history.
 * 2. It travels only as `Authorization: Bearer` (calls, export) and, for the event socket, as the
 *    subprotocol `gaffer.bearer.<token>` (or a first `{type:"auth"}` frame when the token has
 *    characters a subprotocol cannot carry). Never in a query string.
 * 3. The event socket is opened while someone listens and reconnects with capped, jittered
 *    backoff; `onConnectionChange` tells the UI when to refetch after a gap.
 * Pure browser code: no Node imports.
 */
import {
  ConsoleCallError,
  type AuditExportArgs,
  type ConsoleApi,
  type ConsoleArgs,
  type ConsoleEvent,
  type ConsoleMethod,
  type ConsoleReply,
  type ConsoleResult,
  type ExportProgress,
} from '../../src-main/common/console-api';
import type { ErrorBody } from '../../src-main/common/errors';

export const TOKEN_STORAGE_KEY = 'gaffer.operatorToken';
export const EVENTS_SUBPROTOCOL = 'gaffer.console.v1';
export const BEARER_SUBPROTOCOL_PREFIX = 'gaffer.bearer.';

/** What the transport needs from the page (injectable for tests). */
export interface BrowserEnv {
  location: Pick<Location, 'hash' | 'pathname' | 'search' | 'host' | 'protocol'>;
  history: Pick<History, 'replaceState'>;
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;
  fetch: typeof fetch;
  WebSocket: WebSocketCtor;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Saves a finished export as a download (default: a Blob and an `<a download>` click). */
  saveDownload?(parts: Uint8Array[], filename: string, type: string): void;
  random?(): number;
}

export interface WebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketCtor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface BrowserConsoleApi extends ConsoleApi {
  readonly shell: 'browser';
  /** True when an operator token is known (from the fragment or this tab's storage). */
  hasToken(): boolean;
  /** Closes the event socket and stops reconnecting. */
  dispose(): void;
}

const SUBPROTOCOL_SAFE = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
const NO_TOKEN: ErrorBody = {
  code: 'unauthorized',
  status: 401,
  message: 'No operator token in this tab: open the console URL gaffer printed at start-up (it ends in #token=…).',
};

/**
 * Invariant 1: moves a `token` from the URL fragment into storage and strips it from the address
 * bar, keeping any other fragment parameters. Returns the token now known, if any.
 */
export function adoptTokenFromFragment(env: Pick<BrowserEnv, 'location' | 'history' | 'storage'>): string | null {
  const hash = env.location.hash.replace(/^#/, '');
  if (/(^|[&?])token=/.test(hash)) {
    const [prefix, query] = hash.includes('?') ? [hash.slice(0, hash.indexOf('?') + 1), hash.slice(hash.indexOf('?') + 1)] : ['', hash];
    const params = new URLSearchParams(query);
    const token = params.get('token');
    params.delete('token');
    if (token) env.storage.setItem(TOKEN_STORAGE_KEY, token);
    const rest = params.toString();
    const fragment = prefix.replace(/\?$/, '') + (rest ? `${prefix ? '?' : ''}${rest}` : '');
    env.history.replaceState(null, '', `${env.location.pathname}${env.location.search}${fragment ? `#${fragment}` : ''}`);
  }
  return env.storage.getItem(TOKEN_STORAGE_KEY);
}

/** The query string for an export (repeated `type=` for several types). */
export function exportQuery(args: AuditExportArgs): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const t of v) p.append('type', String(t));
    else p.set(k, String(v));
  }
  return p.toString();
}

/** `attachment; filename="x.jsonl"` → `x.jsonl`. */
export function filenameFromDisposition(header: string | null, fallback: string): string {
  const m = header ? /filename="([^"]+)"/i.exec(header) : null;
  return m?.[1] ?? fallback;
}

function defaultSaveDownload(parts: Uint8Array[], filename: string, type: string): void {
  const blob = new Blob(parts as BlobPart[], { type });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

export function defaultBrowserEnv(): BrowserEnv {
  return {
    location: window.location,
    history: window.history,
    storage: window.sessionStorage,
    fetch: window.fetch.bind(window),
    WebSocket: window.WebSocket as unknown as WebSocketCtor,
    setTimeout: (fn, ms) => window.setTimeout(fn, ms),
    clearTimeout: (h) => window.clearTimeout(h as number),
    saveDownload: defaultSaveDownload,
  };
}

async function readReply<T>(res: Response): Promise<ConsoleReply<T>> {
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    return { ok: false, error: { code: 'internal', status: res.status || 500, message: `Gaffer answered ${res.status} without a readable body` } };
  }
  const r = body as Partial<ConsoleReply<T>> | null;
  if (r && r.ok === true) return { ok: true, value: (r as { value: T }).value };
  if (r && r.ok === false && r.error && typeof r.error.code === 'string') return { ok: false, error: r.error };
  // Errors from the server itself (Host refused, 404) come as {error:{…}}.
  const e = (body as { error?: ErrorBody } | null)?.error;
  if (e && typeof e.code === 'string') return { ok: false, error: e };
  return { ok: false, error: { code: 'internal', status: res.status || 500, message: 'unexpected reply from Gaffer' } };
}

const unreachable = (e: unknown): ConsoleCallError =>
  new ConsoleCallError({ code: 'unavailable', status: 503, message: `Cannot reach Gaffer: ${e instanceof Error ? e.message : String(e)}` });

export function createBrowserConsoleApi(env: BrowserEnv = defaultBrowserEnv()): BrowserConsoleApi {
  let token = adoptTokenFromFragment(env);
  const listeners = new Set<(e: ConsoleEvent) => void>();
  const connListeners = new Set<(connected: boolean) => void>();
  let ws: WebSocketLike | null = null;
  let connected = false;
  let attempts = 0;
  let retry: unknown;
  let disposed = false;
  const random = env.random ?? Math.random;

  const currentToken = () => (token ??= env.storage.getItem(TOKEN_STORAGE_KEY));

  const setConnected = (v: boolean) => {
    if (connected === v) return;
    connected = v;
    for (const l of [...connListeners]) {
      try {
        l(v);
      } catch {
        /* a UI listener's failure is its own */
      }
    }
  };

  const deliver = (e: ConsoleEvent) => {
    for (const l of [...listeners]) {
      try {
        l(e);
      } catch {
        /* one listener cannot break the others */
      }
    }
  };

  const connect = () => {
    if (disposed || ws || listeners.size === 0) return;
    const t = currentToken();
    if (!t) return;
    const scheme = env.location.protocol === 'https:' ? 'wss' : 'ws';
    const viaProtocol = SUBPROTOCOL_SAFE.test(t);
    let socket: WebSocketLike;
    try {
      socket = new env.WebSocket(`${scheme}://${env.location.host}/console/events`, viaProtocol ? [EVENTS_SUBPROTOCOL, BEARER_SUBPROTOCOL_PREFIX + t] : [EVENTS_SUBPROTOCOL]);
    } catch {
      scheduleReconnect();
      return;
    }
    ws = socket;
    socket.onopen = () => {
      if (!viaProtocol) socket.send(JSON.stringify({ type: 'auth', token: t }));
    };
    socket.onmessage = (ev) => {
      let frame: { type?: string; events?: ConsoleEvent[] };
      try {
        frame = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      if (frame.type === 'ready') {
        attempts = 0;
        setConnected(true);
      } else if (frame.type === 'events' && Array.isArray(frame.events)) {
        for (const e of frame.events) deliver(e);
      }
    };
    socket.onerror = () => {
      /* followed by onclose */
    };
    socket.onclose = (ev) => {
      if (ws === socket) ws = null;
      setConnected(false);
      if (ev.code === 4401) {
        deliver({ type: 'alert', level: 'critical', title: 'Not signed in', body: NO_TOKEN.message.replace('No operator token in this tab', 'The operator token was refused') });
        return;
      }
      scheduleReconnect();
    };
  };

  const scheduleReconnect = () => {
    if (disposed || listeners.size === 0 || retry !== undefined) return;
    const base = Math.min(10_000, 500 * 2 ** Math.min(attempts, 5));
    attempts++;
    retry = env.setTimeout(() => {
      retry = undefined;
      connect();
    }, base / 2 + random() * (base / 2));
  };

  const disconnect = () => {
    if (retry !== undefined) env.clearTimeout(retry);
    retry = undefined;
    const s = ws;
    ws = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      try {
        s.close(1000, 'no listeners');
      } catch {
        /* already closed */
      }
    }
    setConnected(false);
  };

  const authHeaders = (): Record<string, string> => {
    const t = currentToken();
    if (!t) throw new ConsoleCallError(NO_TOKEN);
    return { authorization: `Bearer ${t}` };
  };

  return {
    shell: 'browser',
    hasToken: () => currentToken() !== null,

    async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
      const headers = { ...authHeaders(), 'content-type': 'application/json' };
      let res: Response;
      try {
        res = await env.fetch(`/console/rpc/${encodeURIComponent(method)}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(args ?? {}),
          credentials: 'omit',
          cache: 'no-store',
          referrerPolicy: 'no-referrer',
        });
      } catch (e) {
        throw unreachable(e);
      }
      const reply = await readReply<ConsoleResult<M>>(res);
      if (reply.ok) return reply.value;
      throw new ConsoleCallError(reply.error);
    },

    subscribe(listener) {
      listeners.add(listener);
      connect();
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) disconnect();
      };
    },

    onConnectionChange(listener) {
      connListeners.add(listener);
      return () => connListeners.delete(listener);
    },

    signIn(next) {
      const t = next.trim();
      if (!t) return;
      token = t;
      env.storage.setItem(TOKEN_STORAGE_KEY, t);
      // The event socket (refused or never opened) starts again with the new token.
      disconnect();
      attempts = 0;
      connect();
    },

    async exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void) {
      const headers = authHeaders();
      let res: Response;
      try {
        res = await env.fetch(`/console/export?${exportQuery(args)}`, { headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer' });
      } catch (e) {
        throw unreachable(e);
      }
      if (!res.ok || !res.body) {
        const reply = await readReply<never>(res);
        throw new ConsoleCallError(reply.ok ? { code: 'internal', status: 500, message: 'export failed' } : reply.error);
      }
      const filename = filenameFromDisposition(res.headers.get('content-disposition'), `gaffer-audit.${args.format}`);
      const reader = res.body.getReader();
      const parts: Uint8Array[] = [];
      let bytes = 0;
      let newlines = 0;
      let lastReport = 0;
      const rows = () => (args.format === 'csv' ? Math.max(0, newlines - 1) : newlines);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        bytes += value.byteLength;
        for (let i = 0; i < value.length; i++) if (value[i] === 10) newlines++;
        const now = Date.now();
        if (now - lastReport >= 100) {
          lastReport = now;
          onProgress({ rows: rows(), bytes, done: false });
        }
      }
      (env.saveDownload ?? defaultSaveDownload)(parts, filename, res.headers.get('content-type') ?? 'application/octet-stream');
      onProgress({ rows: rows(), bytes, done: true });
      return { file: filename, rows: rows() };
    },

    dispose() {
      disposed = true;
      listeners.clear();
      connListeners.clear();
      disconnect();
    },
  };
}
