/**
 * HTTP to our own server on 127.0.0.1 only: a JSON helper for the API, and a raw-socket helper for
 * requests no well-behaved client would send (fuzzing).
 */
import http from 'node:http';
import net from 'node:net';

export interface HttpReply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // Parsed JSON body, if any (wire data: untyped on purpose).
  json: any;
}

export interface RequestOptions {
  method?: string;
  /** Path including the query, e.g. `/api/v1/tasks?role=dev`. */
  path: string;
  token?: string | null;
  headers?: Record<string, string>;
  /** A JSON value (serialised), or a raw string/Buffer sent as is. */
  body?: unknown;
  rawBody?: string | Buffer;
  timeoutMs?: number;
}

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 8 });

/** One request to 127.0.0.1:`port`. Never throws for an HTTP status; throws for a network error. */
export function request(port: number, o: RequestOptions): Promise<HttpReply> {
  const headers: Record<string, string> = { ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let payload: Buffer | undefined;
  if (o.rawBody !== undefined) payload = Buffer.isBuffer(o.rawBody) ? o.rawBody : Buffer.from(o.rawBody, 'utf8');
  else if (o.body !== undefined) {
    payload = Buffer.from(JSON.stringify(o.body), 'utf8');
    headers['content-type'] ??= 'application/json';
  }
  if (payload) headers['content-length'] = String(payload.length);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers, agent: keepAlive, timeout: o.timeoutMs ?? 15_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`HTTP ${o.method ?? 'GET'} ${o.path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The operator API: `api(port, token, 'POST', '/tasks', body)`. */
export function api(port: number, token: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  return request(port, { method, path: `/api/v1${p}`, token, headers: { host: `127.0.0.1:${port}`, ...headers }, ...(body === undefined ? {} : { body }) });
}

/** Like `api`, but throws unless the status is 2xx. */
export async function apiOk(port: number, token: string, method: string, p: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpReply> {
  const r = await api(port, token, method, p, body, headers);
  if (r.status < 200 || r.status > 299) throw new Error(`${method} ${p} → ${r.status}: ${r.text.slice(0, 500)}`);
  return r;
}

export async function createAgentToken(port: number, operatorToken: string, name: string, role: string | null = null): Promise<{ id: string; token: string }> {
  const r = await apiOk(port, operatorToken, 'POST', '/tokens', { name, ...(role ? { role } : {}) });
  return { id: r.json.id as string, token: r.json.token as string };
}

/**
 * Writes `raw` bytes on a fresh TCP connection to 127.0.0.1:`port` and collects whatever comes
 * back until the server closes or `timeoutMs` passes. `status` is parsed from the first line.
 */
export function rawHttp(port: number, raw: string | Buffer, timeoutMs = 3000): Promise<{ status: number | null; text: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(t);
      sock.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      resolve({ status: m ? Number(m[1]) : null, text, closedByServer });
    };
    const t = setTimeout(() => finish(false), timeoutMs);
    sock.on('data', (c: Buffer) => {
      chunks.push(c);
      // One complete response is enough (keep-alive servers would otherwise hold the socket).
      const text = Buffer.concat(chunks).toString('latin1');
      const head = text.indexOf('\r\n\r\n');
      if (head >= 0) {
        const len = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head));
        if (len && text.length - head - 4 >= Number(len[1])) finish(false);
      }
    });
    sock.on('end', () => finish(true));
    sock.on('close', () => finish(true));
    sock.on('error', () => finish(true));
    // Half-close after the request: a server waiting for more (a short body) sees the end at once.
    sock.on('connect', () => sock.end(raw));
  });
}
