/**
 * Raw HTTP requests to a test server on 127.0.0.1 with `node:http` (unlike `fetch`, the test sets
 * every header itself: Host, Origin, a wrong content type, a raw or oversized body).
 */
import http from 'node:http';

export interface TestResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The JSON body, or undefined when the reply is not JSON. Arbitrary JSON the tests index into freely. */
  body: any;
}

export interface TestRequestOptions {
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is (instead of `body`). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  /** The bearer token; the requester's default when left out, none when null. */
  token?: string | null;
}

export type TestRequester = (method: string, path: string, opts?: TestRequestOptions) => Promise<TestResponse>;

/** A request function for the server whose port `port()` gives (read per request: servers restart between tests). */
export function testRequester(port: () => number, defaultToken: string): TestRequester {
  return (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? defaultToken : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
    if (payload !== undefined) {
      headers['content-type'] ??= 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    return new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port: port(), method, path, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode!, headers: res.headers, text, body });
        });
      });
      req.on('error', reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  };
}
