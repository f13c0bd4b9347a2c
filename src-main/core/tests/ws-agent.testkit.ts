/**
 * A raw agent client for tests (core and server alike): JSON frames over `ws`, replies matched by
 * id, pushes collected — plus `until`, the real-time poll the socket tests wait with. It lives in the
 * core's testing folder because core tests may not import the server layer; the server's kit
 * re-exports it.
 */
import WebSocket from 'ws';

/** Polls `pred` (real time) until it is truthy. */
export async function until<T>(pred: () => T | undefined | false | null, what = 'condition', timeoutMs = 10_000): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = pred();
    if (v) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

// Wire JSON is whatever the server sent: one deliberate escape hatch for reading it in tests.
export type Json = any;

export interface WireReply {
  id: string | number | null;
  ok: boolean;
  result?: Json;
  error?: { code: string; status: number; message: string };
}

/** A raw agent: JSON frames over `ws`, replies matched by id, pushes collected. */
export class TestAgent {
  readonly replies: WireReply[] = [];
  readonly pushes: Json[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  closeInfo: { code: number; reason: string } | undefined;
  instanceId = '';
  private seq = 0;
  private readonly waiting = new Map<string | number, (r: WireReply) => void>();
  private readonly nullWaiters: Array<(r: WireReply) => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(data.toString());
      if ('type' in msg && !('ok' in msg)) {
        this.pushes.push(msg);
        return;
      }
      this.replies.push(msg);
      const w = msg.id === null ? this.nullWaiters.shift() : this.waiting.get(msg.id);
      if (msg.id !== null) this.waiting.delete(msg.id);
      w?.(msg);
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
      }),
    );
  }

  static connect(url: string, opts: { token?: string; headers?: Record<string, string> } = {}): Promise<TestAgent> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false });
    const agent = new TestAgent(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(agent));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body })));
      });
      ws.once('error', (e) => reject(e));
    });
  }

  /** Connects and says hello; throws if hello is refused. */
  static async hello(url: string, token: string, role = 'dev', name = 'agent', extra: Record<string, unknown> = {}): Promise<TestAgent> {
    const a = await TestAgent.connect(url, { token });
    const r = await a.request('hello', { role, name, ...extra });
    if (!r.ok) throw new Error(`hello refused: ${JSON.stringify(r.error)}`);
    a.instanceId = r.result.instanceId;
    return a;
  }

  request(type: string, fields: Record<string, unknown> = {}): Promise<WireReply> {
    const id = `r${++this.seq}`;
    return this.raw({ id, type, ...fields }, id);
  }

  /** Sends any JSON value; resolves with the reply carrying `id` (or the next `id: null` reply). */
  raw(frame: unknown, id: string | number | null = null): Promise<WireReply> {
    return this.text(JSON.stringify(frame), id);
  }

  text(text: string, id: string | number | null = null): Promise<WireReply> {
    const p = new Promise<WireReply>((resolve) => {
      if (id === null) this.nullWaiters.push(resolve);
      else this.waiting.set(id, resolve);
    });
    this.ws.send(text);
    return p;
  }

  /**
   * Sends several requests in ONE TCP write (the socket corked around them), as a pipelining
   * client does: the server reads them in one chunk, in order, in the same turn.
   */
  together(requests: Array<[type: string, fields: Record<string, unknown>]>): Promise<WireReply[]> {
    const socket = (this.ws as unknown as { _socket: { cork(): void; uncork(): void } })._socket;
    socket.cork();
    try {
      return Promise.all(requests.map(([type, fields]) => this.request(type, fields)));
    } finally {
      socket.uncork();
    }
  }

  async nextPush(type?: string): Promise<Json> {
    return until(() => this.pushes.find((p) => type === undefined || p.type === type), `a ${type ?? ''} push`);
  }

  close(): void {
    this.ws.close(1000);
  }

  /** Drops the TCP connection without a close frame (as a killed process would). */
  kill(): void {
    this.ws.terminate();
  }
}
