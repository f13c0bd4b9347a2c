/**
 * Checks shared by every HTTP and WebSocket entry point of the local server.
 *
 * 1. Host allow-list: only 127.0.0.1 / localhost / [::1] with our port — defeats DNS rebinding.
 * 2. Origin: a browser page from another origin can neither open the agent socket nor call the
 *    API. Agents (non-browser) send no Origin; the headless console's own origin is allowed where
 *    the console needs it.
 * 3. Bearer tokens are read from the Authorization header only, never from URLs (except the
 *    console bootstrap, which trades the URL token for an HttpOnly cookie at once).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ERROR_STATUS, GafferError, toErrorBody, type ErrorCode } from '../common/errors';
import { assertWellFormedText, decodeUtf8Strict } from '../common/text';
import { secretsEqual } from '../core/auth';

export interface GuardOptions {
  /** Port the server is bound to (for Host and Origin checks). */
  port: number;
  /** Extra origins allowed on the agent socket (default none). */
  allowedOrigins?: string[];
}

const LOCAL_HOSTNAMES = ['127.0.0.1', 'localhost', '[::1]'];

export function allowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  return LOCAL_HOSTNAMES.some((h) => host === `${h}:${port}` || (port === 80 && host === h));
}

/** Origins of pages served by this server itself (the headless console). */
export function selfOrigins(port: number): string[] {
  return LOCAL_HOSTNAMES.map((h) => `http://${h}:${port}`);
}

export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  return origin === undefined || allowed.includes(origin);
}

export function bearerToken(req: IncomingMessage): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  return m?.[1];
}

export function cookie(req: IncomingMessage, name: string): string | undefined {
  const raw = req.headers.cookie;
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k !== name) continue;
    try {
      return decodeURIComponent(v.join('='));
    } catch {
      return undefined; // not percent-encoded UTF-8: no such cookie, as far as we are concerned
    }
  }
  return undefined;
}

/**
 * A request header as text. Node hands header bytes over as latin1 characters; a client that
 * sends UTF-8 means UTF-8, so the bytes are decoded as such — strictly: bytes that are not UTF-8
 * are refused (`bad_request` naming the header), never stored as mojibake or U+FFFD.
 */
export function headerText(req: IncomingMessage, name: string): string | undefined {
  const raw = req.headers[name.toLowerCase()];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!/[\u0080-\u00ff]/.test(value)) return value; // ASCII: nothing to decode
  const text = decodeUtf8Strict(Buffer.from(value, 'latin1'));
  if (text === undefined) throw new GafferError('bad_request', `header "${name}" is not valid UTF-8`);
  return text;
}

/**
 * The query string as name/value pairs, decoded strictly: `URLSearchParams` turns bytes that are
 * not UTF-8 (`%FF`, an encoded surrogate `%ED%A0%80`) into U+FFFD silently; here they are a
 * `bad_request` naming the parameter. `+` is a space, as in forms.
 */
export function queryPairs(search: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const q = search.startsWith('?') ? search.slice(1) : search;
  if (q === '') return out;
  for (const part of q.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const name = decodeQueryComponent(rawName, () => `a query parameter name is not valid percent-encoded UTF-8`);
    out.push([name, decodeQueryComponent(rawValue, () => `query parameter "${name}" is not valid percent-encoded UTF-8`)]);
  }
  return out;
}

function decodeQueryComponent(raw: string, what: () => string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    throw new GafferError('bad_request', what());
  }
}

export function isOperator(presented: string | undefined, operatorToken: string): boolean {
  return presented !== undefined && secretsEqual(presented, operatorToken);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(text);
}

/** Writes `{error:{code,status,message}}` with the contracted status. */
export function sendError(res: ServerResponse, e: unknown): void {
  const body = toErrorBody(e);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, body.status ?? ERROR_STATUS.internal, { error: body });
}

const UPGRADE_REFUSALS: Record<number, [reason: string, code: ErrorCode]> = {
  400: ['Bad Request', 'bad_request'],
  401: ['Unauthorized', 'unauthorized'],
  403: ['Forbidden', 'forbidden'],
  404: ['Not Found', 'not_found'],
  429: ['Too Many Requests', 'rate_limited'],
  503: ['Service Unavailable', 'unavailable'],
};

/** A request's URL (path and query; the host is not read from it), or undefined when it does not parse. */
export function requestUrl(req: IncomingMessage): URL | undefined {
  try {
    return new URL(req.url ?? '/', 'http://127.0.0.1');
  } catch {
    return undefined;
  }
}

/** The path of an upgrade request, or undefined when its URL does not parse. */
export function upgradePath(req: IncomingMessage): string | undefined {
  return requestUrl(req)?.pathname;
}

/**
 * Refuses an upgrade with a plain HTTP response (`{error:{code,status,message}}`) before any
 * WebSocket handshake; `code` names the refusal when the status alone does not (429 `too_many_connections`).
 */
export function rejectUpgrade(socket: Duplex, status: number, message: string, code?: ErrorCode): void {
  const [reason, statusCode] = UPGRADE_REFUSALS[status] ?? UPGRADE_REFUSALS[400]!;
  code ??= statusCode;
  const body = JSON.stringify({ error: { code, status, message } });
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  // Destroy only once the response has left, or the client may see a reset instead of the status.
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Connection: close\r\nCache-Control: no-store\r\n\r\n${body}`,
  );
}

/** A body cap: the limit, what to say when it is passed or the body does not arrive whole. */
export interface BodyCap {
  maxBytes: number;
  tooLarge: string;
  incomplete: string;
  /** Past the cap, close the request so the rest is not read (default: leave it as it is). */
  closeWhenTooLarge?: boolean;
}

/**
 * Yields a request body's chunks, counting them against the cap: past it → too_large. A client
 * that goes away mid-body ("aborted") is bad input (bad_request), not an internal failure to log.
 */
export async function* cappedBody(req: IncomingMessage, cap: BodyCap): AsyncGenerator<Buffer> {
  let size = 0;
  const chunks = req[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<unknown>;
    try {
      next = await chunks.next();
    } catch {
      throw new GafferError('bad_request', cap.incomplete);
    }
    if (next.done) return;
    const chunk = next.value as Buffer;
    size += chunk.length;
    if (size > cap.maxBytes) {
      if (cap.closeWhenTooLarge) {
        try {
          await chunks.return?.();
        } catch {
          /* the too_large error is what counts */
        }
      }
      throw new GafferError('too_large', cap.tooLarge);
    }
    yield chunk;
  }
}

/** Reads a JSON request body with a size cap; malformed JSON → bad_request, too big → too_large. */
export async function readJsonBody(req: IncomingMessage, maxBytes = 256 * 1024): Promise<unknown> {
  const chunks: Buffer[] = [];
  const cap: BodyCap = {
    maxBytes,
    tooLarge: `request body larger than ${maxBytes} bytes`,
    incomplete: 'the request body was not received completely',
    closeWhenTooLarge: true,
  };
  for await (const chunk of cappedBody(req, cap)) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  if (body.length === 0) return {};
  const text = decodeUtf8Strict(body);
  if (text === undefined) throw new GafferError('bad_request', 'request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new GafferError('bad_request', 'request body is not valid JSON');
  }
  // JSON escapes can still spell an unpaired surrogate ("\ud800"): refused whatever the route.
  assertWellFormedText(value, 'body');
  return value;
}
