/**
 * A raw agent-socket client (plain `ws`, no SDK): sends any frame, matches replies by id, records
 * pushes and the close code. Used where the SDK would be too polite (storms, fuzzing, security).
 */
import WebSocket from 'ws';

// Wire JSON is whatever the server sent: one deliberate escape hatch for reading it.
export type Json = any;

export interface WireReply {
  id: string | number | null;
  ok: boolean;
  result?: Json;
  error?: { code: string; status: number; message: string };
}

export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    readonly headers: Record<string, string | string[] | undefined>,
  ) {
    super(`upgrade refused with HTTP ${status}: ${body}`);
  }
}

export class RawAgent {
  /** Every reply, in arrival order. */
  readonly replies: WireReply[] = [];
  readonly pushes: Json[] = [];
  /** Frames that were not JSON (must never happen). */
  readonly garbage: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  closeInfo: { code: number; reason: string } | undefined;
  instanceId = '';
  /** Called for every push (job_trigger, precheck) as it arrives. */
  onPush: ((msg: Json) => void) | undefined;
  private seq = 0;
  private readonly waiting = new Map<string | number, (r: WireReply) => void>();
  private readonly nullWaiters: Array<(r: WireReply) => void> = [];

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      const text = data.toString();
      let msg: Json;
      try {
        msg = JSON.parse(text);
      } catch {
        this.garbage.push(isBinary ? `<binary ${text.length}>` : text.slice(0, 200));
        return;
      }
      if (msg && typeof msg === 'object' && 'type' in msg && !('ok' in msg)) {
        this.pushes.push(msg);
        this.onPush?.(msg);
        return;
      }
      this.replies.push(msg);
      const w = msg.id === null ? this.nullWaiters.shift() : this.waiting.get(msg.id);
      if (msg.id !== null) this.waiting.delete(msg.id);
      w?.(msg);
    });
    ws.on('error', () => {
      /* followed by close */
    });
    this.closed = new Promise((resolve) =>
      ws.on('close', (code, reason) => {
        this.closeInfo = { code, reason: reason.toString() };
        // Whoever still waits gets nothing more: resolve them with a synthetic "closed" marker.
        const marker: WireReply = { id: null, ok: false, error: { code: '__closed__', status: 0, message: `closed ${code}` } };
        for (const w of this.waiting.values()) w(marker);
        this.waiting.clear();
        for (const w of this.nullWaiters.splice(0)) w(marker);
        resolve(this.closeInfo);
      }),
    );
  }

  static connect(url: string, opts: { token?: string; headers?: Record<string, string>; timeoutMs?: number } = {}): Promise<RawAgent> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    const ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: opts.timeoutMs ?? 10_000, maxPayload: 64 * 1024 * 1024 });
    const agent = new RawAgent(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(agent));
      ws.once('unexpected-response', (_req, res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => reject(new UpgradeRefused(res.statusCode ?? 0, body, res.headers)));
        res.on('error', () => reject(new UpgradeRefused(res.statusCode ?? 0, body, res.headers)));
      });
      ws.once('error', (e) => reject(e));
    });
  }

  /** Connects and says hello; throws if hello is refused. */
  static async hello(url: string, token: string, role = 'dev', name = 'raw', extra: Record<string, unknown> = {}): Promise<RawAgent> {
    const a = await RawAgent.connect(url, { token });
    const r = await a.request('hello', { role, name, ...extra });
    if (!r.ok) throw new Error(`hello refused: ${JSON.stringify(r.error)}`);
    a.instanceId = r.result.instanceId;
    return a;
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  request(type: string, fields: Record<string, unknown> = {}): Promise<WireReply> {
    const id = `r${++this.seq}`;
    return this.sendText(JSON.stringify({ ...fields, id, type }), id);
  }

  /**
   * Sends one text frame; resolves with the reply carrying `expectId` (or the next `id: null`
   * reply when `expectId` is null), or with a `__closed__` marker if the socket closes first.
   */
  sendText(text: string | Buffer, expectId: string | number | null = null): Promise<WireReply> {
    const p = this.expect(expectId);
    if (this.open) this.ws.send(text, { binary: false });
    return p;
  }

  sendBinary(data: Buffer): Promise<WireReply> {
    const p = this.expect(null);
    if (this.open) this.ws.send(data, { binary: true });
    return p;
  }

  /** Sends without waiting for anything. */
  fire(text: string | Buffer, binary = false): void {
    if (this.open) this.ws.send(text, { binary });
  }

  private expect(id: string | number | null): Promise<WireReply> {
    return new Promise<WireReply>((resolve) => {
      if (this.closeInfo) {
        resolve({ id: null, ok: false, error: { code: '__closed__', status: 0, message: `closed ${this.closeInfo.code}` } });
        return;
      }
      if (id === null) this.nullWaiters.push(resolve);
      else this.waiting.set(id, resolve);
    });
  }

  close(code = 1000): Promise<{ code: number; reason: string }> {
    if (this.ws.readyState === WebSocket.OPEN || this.ws.readyState === WebSocket.CONNECTING) this.ws.close(code);
    return this.closed;
  }

  /** Drops the TCP connection without a close frame (as a killed process would). */
  kill(): void {
    this.ws.terminate();
  }
}
