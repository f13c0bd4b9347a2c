/**
 * Drives the fuzz generators (fuzz.ts) against a server and checks every answer against the
 * contract (PROTOCOL.md tables): error codes and their statuses, the echoed request id, the
 * close codes. Works against an in-process server or the headless child process alike.
 */
import { ERROR_STATUS } from '../../../src-main/common/errors';
import { MAX_FRAME_BYTES } from '../../../src-main/common/protocol';
import { OVERSIZE_READ_BYTES } from '../../../src-main/server/agent-socket';
import type { Db } from '../../../src-main/core/db/open';
import { consoleCase, httpCase, invalidUtf8, rawHttpCase, usableId, wsCase, type FuzzContext, type HttpFuzzContext } from './fuzz';
import { rawHttp, request } from './http';
import type { Rng } from './mode';
import { RawAgent, UpgradeRefused, type WireReply } from './wire';

/** Error codes of PROTOCOL.md §1 (the only ones bad input may produce). */
export const CONTRACT_CODES = new Set(['bad_request', 'unauthorized', 'forbidden', 'not_found', 'not_holder', 'conflict', 'invalid_transition', 'too_large', 'rate_limited']);
/** Close codes of PROTOCOL.md (and its documented additions), plus the RFC 6455 transport codes. */
export const CONTRACT_CLOSES = new Set([4400, 4401, 4403, 4408, 4409, 4410, 4411, 4413, 4429, 1000, 1001, 1005, 1006, 1007]);
/** HTTP statuses bad input may produce on /api/v1 (431: Node's own header-size limit, before any route). */
export const API_STATUSES = new Set([200, 201, 400, 401, 403, 404, 409, 413, 422, 431]);

export interface FuzzTally {
  cases: number;
  byKind: Record<string, number>;
  codes: Record<string, number>;
  closes: Record<string, number>;
  statuses: Record<string, number>;
  problems: string[];
}

export function newTally(): FuzzTally {
  return { cases: 0, byKind: {}, codes: {}, closes: {}, statuses: {}, problems: [] };
}

const bump = (o: Record<string, number>, k: string | number) => (o[String(k)] = (o[String(k)] ?? 0) + 1);

function problem(t: FuzzTally, what: string): void {
  if (t.problems.length < 50) t.problems.push(what);
}

/** A reply is well-formed: `{id, ok:false, error:{code,status,message}}` with a contracted code and its status. */
export function checkErrorReply(t: FuzzTally, r: WireReply, kind: string, frame: string): void {
  const e = r.error;
  if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || e.message.length === 0) {
    problem(t, `${kind}: malformed error reply ${JSON.stringify(r).slice(0, 200)}`);
    return;
  }
  bump(t.codes, e.code);
  if (!CONTRACT_CODES.has(e.code)) problem(t, `${kind}: uncontracted code ${e.code} (${e.message}) for ${frame.slice(0, 160)}`);
  else if (e.status !== ERROR_STATUS[e.code as keyof typeof ERROR_STATUS]) problem(t, `${kind}: code ${e.code} with status ${e.status}`);
}

export interface WsTarget {
  url: string;
  /** A token bound to ctx.role, used by every fuzz session. */
  token: string;
  ctx: FuzzContext;
}

async function helloed(target: WsTarget, name: string): Promise<RawAgent> {
  return RawAgent.hello(target.url, target.token, target.ctx.role, name);
}

/** `count` generated frames over sessions of at most `perSession` frames (under the rate limit). */
export async function fuzzSessions(target: WsTarget, rng: Rng, count: number, t: FuzzTally, perSession = 300, pipeline = 40): Promise<void> {
  let sent = 0;
  let session = 0;
  while (sent < count) {
    const a = await helloed(target, `fuzz-${session++}`);
    let inSession = 0;
    while (inSession < perSession && sent < count && a.open) {
      const batch: Array<{ c: ReturnType<typeof wsCase>; p: Promise<WireReply> }> = [];
      const ids = new Set<string | number>();
      while (batch.length < pipeline && inSession < perSession && sent < count) {
        const c = wsCase(rng, target.ctx);
        if (c.replyId !== null && ids.has(c.replyId)) break; // one waiter per id
        if (c.replyId !== null) ids.add(c.replyId);
        batch.push({ c, p: a.sendText(c.frame, c.replyId) });
        inSession++;
        sent++;
      }
      const settled = batch.map(() => false);
      batch.forEach((b, i) => void b.p.then(() => (settled[i] = true)));
      let replies: WireReply[];
      try {
        replies = await withTimeout(Promise.all(batch.map((b) => b.p)), 15_000, 'replies to a fuzz batch');
      } catch (e) {
        const pending = batch.filter((_, i) => !settled[i]).map((b) => `${b.c.kind} id=${JSON.stringify(b.c.replyId)} ${String(b.c.frame).slice(0, 300)}`);
        const last = a.replies.slice(-5).map((r) => JSON.stringify(r).slice(0, 200));
        if (process.env.FUZZ_DEBUG) {
          (await import('node:fs')).writeFileSync(process.env.FUZZ_DEBUG, JSON.stringify({ batch: batch.map((b, i) => ({ kind: b.c.kind, id: b.c.replyId, settled: settled[i], frame: String(b.c.frame).slice(0, 2000) })), replies: a.replies.slice(-batch.length - 5) }, null, 1));
        }
        throw new Error(`${(e as Error).message}\nunanswered:\n${pending.join('\n')}\nlast replies:\n${last.join('\n')}`, { cause: e });
      }
      for (const [i, r] of replies.entries()) {
        const { c } = batch[i]!;
        t.cases++;
        bump(t.byKind, c.kind);
        const frame = typeof c.frame === 'string' ? c.frame : '<binary>';
        if (r.error?.code === '__closed__') {
          problem(t, `${c.kind}: the server closed the session (${a.closeInfo?.code} ${a.closeInfo?.reason}) instead of answering ${frame.slice(0, 160)}`);
          continue;
        }
        if (r.id !== c.replyId) problem(t, `${c.kind}: reply id ${JSON.stringify(r.id)}, expected ${JSON.stringify(c.replyId)}`);
        if (r.ok) {
          bump(t.codes, 'ok');
          if (!c.allowed.includes('ok')) problem(t, `${c.kind}: accepted ${frame.slice(0, 200)}`);
        } else {
          checkErrorReply(t, r, c.kind, frame);
          if (r.error && !c.allowed.includes(r.error.code)) problem(t, `${c.kind}: got ${r.error.code} (${r.error.message}), expected ${c.allowed.join('|')} for ${frame.slice(0, 160)}`);
        }
      }
    }
    if (!a.open) problem(t, `session fuzz-${session - 1} was closed by the server (${a.closeInfo?.code} ${a.closeInfo?.reason})`);
    a.kill();
  }
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms (the server stopped answering)`)), ms)));
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

async function expectClose(t: FuzzTally, a: RawAgent, kind: string, codes: number[], ms = 5000): Promise<void> {
  const c = await withTimeout(a.closed, ms, `close for ${kind}`);
  bump(t.closes, c.code);
  if (!CONTRACT_CLOSES.has(c.code)) problem(t, `${kind}: uncontracted close code ${c.code}`);
  if (!codes.includes(c.code)) problem(t, `${kind}: closed with ${c.code} (${c.reason}), expected ${codes.join('|')}`);
}

/** Cases that end their session: each on a fresh connection, with the contracted close code. */
export async function fuzzSessionEnders(target: WsTarget, rng: Rng, rounds: number, t: FuzzTally, opts: { helloTimeoutMs: number; badToken: string }): Promise<void> {
  const count = (kind: string) => {
    t.cases++;
    bump(t.byKind, kind);
  };
  const reply = async (a: RawAgent, p: Promise<WireReply>, kind: string, codes: string[], id: string | number | null = null) => {
    const r = await withTimeout(p, 5000, `reply for ${kind}`);
    if (r.error?.code === '__closed__') return problem(t, `${kind}: closed without a reply`);
    if (r.id !== id) problem(t, `${kind}: reply id ${JSON.stringify(r.id)}, expected ${JSON.stringify(id)}`);
    if (r.ok) return problem(t, `${kind}: accepted`);
    checkErrorReply(t, r, kind, kind);
    if (!codes.includes(r.error!.code)) problem(t, `${kind}: got ${r.error!.code}, expected ${codes.join('|')}`);
  };
  for (let i = 0; i < rounds; i++) {
    // 1. First frame is not a valid hello → bad_request + 4400.
    {
      const kind = 'first frame not hello';
      count(kind);
      const a = await RawAgent.connect(target.url, { token: target.token });
      let c = wsCase(rng, target.ctx);
      while (typeof c.frame !== 'string' || /"type":"hello"/.test(c.frame)) c = wsCase(rng, target.ctx);
      const id = usableId(c.frame);
      await reply(a, a.sendText(c.frame, id), kind, ['bad_request'], id);
      await expectClose(t, a, kind, [4400]);
    }
    // 2. A binary first frame.
    {
      const kind = 'binary first frame';
      count(kind);
      const a = await RawAgent.connect(target.url, { token: target.token });
      await reply(a, a.sendBinary(Buffer.from([0x7b, 0x7d, rng.int(0, 255)])), kind, ['bad_request']);
      await expectClose(t, a, kind, [4400]);
    }
    // 3. hello with a bad token (in the frame), and without any token.
    for (const [kind, fields] of [
      ['hello, bad token', { token: opts.badToken }],
      ['hello, no token', {}],
    ] as const) {
      count(kind);
      const a = await RawAgent.connect(target.url);
      await reply(a, a.request('hello', { role: target.ctx.role, name: 'fuzz-x', ...fields }), kind, ['unauthorized'], 'r1');
      await expectClose(t, a, kind, [4401]);
    }
    // 4. hello for a role the token may not act as.
    {
      const kind = 'hello, role not allowed';
      count(kind);
      const a = await RawAgent.connect(target.url, { token: target.token });
      await reply(a, a.request('hello', { role: 'ops', name: 'fuzz-x' }), kind, ['forbidden'], 'r1');
      await expectClose(t, a, kind, [4403]);
    }
    // 5. A bad bearer header: the upgrade itself is refused with 401.
    {
      const kind = 'upgrade, bad bearer';
      count(kind);
      try {
        const a = await RawAgent.connect(target.url, { headers: { authorization: rng.pick([`Bearer ${opts.badToken}`, 'Bearer', 'Basic abc', `Bearer ${'x'.repeat(300)}`]) } });
        a.kill();
        problem(t, `${kind}: the upgrade was accepted`);
      } catch (e) {
        const status = e instanceof UpgradeRefused ? e.status : 0;
        bump(t.statuses, status);
        if (status !== 401) problem(t, `${kind}: ${String(e)}`);
      }
    }
    // 6. A frame over the size limit, before and after hello → too_large + 4413.
    for (const pre of [true, false]) {
      const kind = `oversized frame ${pre ? 'before' : 'after'} hello`;
      count(kind);
      const a = pre ? await RawAgent.connect(target.url, { token: target.token }) : await helloed(target, 'fuzz-big');
      const size = MAX_FRAME_BYTES + rng.int(1, 4 * MAX_FRAME_BYTES);
      const frame = `{"id":1,"type":"heartbeat","pad":"${'x'.repeat(size)}"}`;
      // The reply names the frame's id when the frame was small enough to be read for it.
      const id = Buffer.byteLength(frame) <= OVERSIZE_READ_BYTES ? 1 : null;
      await reply(a, a.sendText(frame, id), kind, ['too_large'], id);
      await expectClose(t, a, kind, [4413]);
    }
    // 7. Invalid UTF-8 in a text frame: the transport refuses it (1007).
    {
      const kind = 'invalid UTF-8 text frame';
      count(kind);
      const a = await helloed(target, 'fuzz-utf8');
      a.fire(invalidUtf8(rng));
      await expectClose(t, a, kind, [1007]);
    }
    // 8. A binary frame after hello: refused, the session stays.
    {
      const kind = 'binary frame after hello';
      count(kind);
      const a = await helloed(target, 'fuzz-bin');
      await reply(a, a.sendBinary(Buffer.from(JSON.stringify({ id: 5, type: 'heartbeat' }))), kind, ['bad_request']);
      const hb = await a.request('heartbeat');
      if (!hb.ok) problem(t, `${kind}: the session did not survive`);
      a.kill();
    }
  }
  // 9. A flood: rate_limited answers, then 4429.
  {
    const kind = 'flood';
    count(kind);
    const a = await helloed(target, 'fuzz-flood');
    // Keep flooding until cut off: a slow box refills the bucket between chunks, so no fixed count.
    for (let round = 0; round < 40 && a.open; round++) {
      for (let i = 0; i < 500 && a.open; i++) a.fire(`{"id":${round * 500 + i},"type":"nope"}`);
      await Promise.race([a.closed, new Promise((r) => setTimeout(r, 20))]);
    }
    await expectClose(t, a, kind, [4429], 10_000);
    const codes = new Set(a.replies.filter((r) => !r.ok).map((r) => r.error?.code));
    if (!codes.has('rate_limited')) problem(t, `${kind}: no rate_limited answer (${[...codes].join(',')})`);
    for (const c of codes) if (c !== 'rate_limited' && c !== 'bad_request') problem(t, `${kind}: unexpected code ${c}`);
  }
  // 10. Frames pipelined behind hello beyond the limit: 4400, or all answered.
  {
    const kind = 'frames pipelined before the hello reply';
    count(kind);
    const a = await RawAgent.connect(target.url, { token: target.token });
    a.fire(JSON.stringify({ id: 'h', type: 'hello', role: target.ctx.role, name: 'fuzz-pipe' }));
    for (let i = 0; i < 100; i++) a.fire(`{"id":${i},"type":"nope"}`);
    await Promise.race([a.closed, new Promise((r) => setTimeout(r, 1500))]);
    if (a.closeInfo && a.closeInfo.code !== 4400) problem(t, `${kind}: closed with ${a.closeInfo.code}`);
    if (a.closeInfo) bump(t.closes, a.closeInfo.code);
    a.kill();
  }
  // 11. Silence: no hello within the timeout → 4408.
  if (opts.helloTimeoutMs <= 2000) {
    const kind = 'no hello in time';
    count(kind);
    const a = await RawAgent.connect(target.url, { token: target.token });
    await expectClose(t, a, kind, [4408], opts.helloTimeoutMs + 5000);
  }
}

/** HTTP cases through a normal client: contracted statuses and error bodies, never a 500. */
export async function fuzzHttp(c: HttpFuzzContext, rng: Rng, count: number, t: FuzzTally, consoleShare = 0.1): Promise<void> {
  const inflight: Array<Promise<void>> = [];
  for (let i = 0; i < count; i++) {
    const hc = rng.chance(consoleShare) ? consoleCase(rng, c) : httpCase(rng, c);
    inflight.push(
      (async () => {
        let r;
        try {
          r = await request(c.port, { method: hc.method, path: hc.path, headers: hc.headers, ...(hc.body === undefined ? {} : { rawBody: hc.body }), timeoutMs: 15_000 });
        } catch (e) {
          // The server may cut a request it refuses early (e.g. an oversized body); never hang.
          if (!/ECONNRESET|socket hang up|EPIPE/.test(String(e))) problem(t, `${hc.kind}: ${String(e)}`);
          bump(t.statuses, 'reset');
          t.cases++;
          bump(t.byKind, hc.kind.split(' ')[0]!);
          return;
        }
        t.cases++;
        bump(t.byKind, hc.kind.split(' ')[0]!);
        bump(t.statuses, r.status);
        // Outside the API only the console's "not built yet" page (no renderer in tests) may be a 503.
        const notBuilt = r.status === 503 && !hc.api && (hc.method === 'HEAD' || /not been built/.test(r.text));
        if (r.status >= 500 && !notBuilt) problem(t, `${hc.kind} ${hc.path.slice(0, 100)}: ${r.status} ${r.text.slice(0, 200)}`);
        if (hc.api) {
          if (!API_STATUSES.has(r.status)) problem(t, `${hc.kind}: uncontracted status ${r.status}`);
          for (const h of Object.keys(r.headers)) if (h.startsWith('access-control-')) problem(t, `${hc.kind}: CORS header ${h}`);
          if (r.status >= 400 && r.status !== 431 && hc.method !== 'HEAD') {
            const e = r.json?.error;
            if (!e || !CONTRACT_CODES.has(e.code) || e.status !== r.status) problem(t, `${hc.kind}: error body ${r.text.slice(0, 200)}`);
            else bump(t.codes, e.code);
          }
        }
      })(),
    );
    if (inflight.length >= 8) await Promise.all(inflight.splice(0));
  }
  await Promise.all(inflight);
}

/** Raw, malformed HTTP on fresh sockets: a 4xx (or a closed socket), never a 5xx, never a hang. */
export async function fuzzRawHttp(c: HttpFuzzContext, rng: Rng, count: number, t: FuzzTally): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { kind, raw } = rawHttpCase(rng, c);
    const r = await rawHttp(c.port, raw, 5000);
    t.cases++;
    bump(t.byKind, `raw: ${kind}`);
    bump(t.statuses, r.status ?? (r.closedByServer ? 'closed' : 'silent'));
    if (r.status !== null && r.status >= 500) problem(t, `raw ${kind}: ${r.text.slice(0, 200)}`);
    if (r.status === null && !r.closedByServer) problem(t, `raw ${kind}: no answer and the socket stayed open`);
    // Only reads may succeed (a malformed write is never acted on).
    if (r.status !== null && r.status < 300 && !String(raw).startsWith('GET ')) problem(t, `raw ${kind}: answered ${r.status}`);
  }
}

/** Every table except the audit log, for before/after comparison (rows of `skipInstances` left out). */
export function tablesDigest(db: Db, skipInstance: (row: Record<string, unknown>) => boolean): string {
  const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('audit') AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as Array<{ name: string }>).map((r) => r.name);
  return tables
    .map((name) => {
      let rows = db.prepare(`SELECT * FROM "${name}" ORDER BY 1`).all() as Array<Record<string, unknown>>;
      // Liveness timestamps move with pings on their own; everything else must stay put.
      if (name === 'instances') rows = rows.filter((r) => !skipInstance(r)).map(({ last_heartbeat_at: _hb, ...r }) => r);
      return `${name}:${JSON.stringify(rows)}`;
    })
    .join('\n');
}
