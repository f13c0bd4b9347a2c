/**
 * Seeded generators of bad input for the agent socket and the HTTP API: random JSON shapes, wrong
 * types for every field of every message type (common/protocol.ts), boundary numbers, huge
 * strings, deep nesting, truncated JSON, invalid UTF-8, binary frames, unknown types, prototype-
 * pollution keys; for HTTP: bad methods, paths, query parameters, bodies and headers.
 *
 * A generated case says what a correct server must answer. Cases are built so that a correct
 * server changes no state: a frame that happens to be valid is either harmless (heartbeat, a
 * second hello) or refused for a reason other than its shape (stale fence, unknown run, …).
 */
import { agentRequest, AGENT_REQUEST_TYPES, MAX_FRAME_BYTES } from '../../../src-main/common/protocol';
import type { Rng } from './mode';

// ---------------------------------------------------------------------------------------------
// Values

const BOUNDARY_NUMBERS = [0, -0, -1, 1, 1.5, -1.5, 2 ** 31, -(2 ** 31), 2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e21, -1e21, 1e308, -1e308, 5e-324, 0.1, 1_000_001, -1_000_001];

export function bigString(rng: Rng, min: number, max: number): string {
  const n = rng.int(min, max);
  const unit = rng.pick(['x', 'ä', '😀', '\u0000', '\\', '"', '\u202e', '\ud800', 'ab']);
  return unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
}

const WEIRD_STRINGS = ['', ' ', '\t\n', '\u0000', 'null', 'undefined', 'NaN', '-1', '1e999', '__proto__', 'constructor', 'prototype', '../../etc/passwd', '<script>', "'; DROP TABLE tasks; --", '%00', '\ud800', '😀'.repeat(70), 'a b', '-dev', '.dev', 'dév'];

/** A random JSON value of bounded size and depth. */
export function randomJson(rng: Rng, depth = 0): unknown {
  const k = rng.int(0, depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick(BOUNDARY_NUMBERS);
    case 3:
      return rng.int(-1000, 1000);
    case 4:
      return rng.pick(WEIRD_STRINGS);
    case 5:
      return bigString(rng, 0, 40);
    case 6:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[rng.pick(['a', 'id', 'type', 'role', '__proto__', 'constructor', bigString(rng, 1, 8)])] = randomJson(rng, depth + 1);
      return o;
    }
  }
}

/** A value whose JSON type differs from `like`'s. */
export function wrongType(rng: Rng, like: unknown): unknown {
  for (;;) {
    const v = rng.pick<unknown>([null, true, false, 0, -1, 1.5, 2 ** 53, 'x', '', [], [1, 'a'], {}, { a: 1 }, [[[]]], { __proto__: 1 }]);
    const t = (x: unknown) => (x === null ? 'null' : Array.isArray(x) ? 'array' : typeof x);
    if (t(v) !== t(like)) return v;
  }
}

export function deepNesting(depth: number, open = '[', close = ']'): string {
  return open.repeat(depth) + close.repeat(depth);
}

// ---------------------------------------------------------------------------------------------
// Agent socket

/** Field catalogue of every request type (valid generators), from common/protocol.ts. */
type FieldGen = (rng: Rng, ctx: FuzzContext) => unknown;
interface FieldSpec {
  gen: FieldGen;
  required: boolean;
}

export interface FuzzContext {
  /** A task held by a non-fuzz agent: renew/report on it must be refused. */
  heldTaskId: number;
  heldFence: number;
  /** A finished task. */
  doneTaskId: number;
  /** An idempotency key already used with another body (reusing it → conflict). */
  usedKey: string;
  /** The role the fuzz sessions' token is bound to. */
  role: string;
}

const str = (min: number, max: number): FieldGen => (rng) => `s${bigString(rng, Math.max(0, min - 1), Math.max(0, Math.min(max, 30) - 1))}`;
const taskIdGen: FieldGen = (rng, c) => rng.pick([c.heldTaskId, c.doneTaskId, 987_654_321]);
const fenceGen: FieldGen = (rng, c) => rng.pick([1, 2, c.heldFence + 1, 999]);

export const FIELDS: Record<string, Record<string, FieldSpec>> = {
  hello: { role: { gen: (_r, c) => c.role, required: true }, name: { gen: str(1, 200), required: true }, version: { gen: str(0, 100), required: false }, token: { gen: str(0, 200), required: false }, instanceId: { gen: str(1, 100), required: false } },
  heartbeat: {},
  claim: { role: { gen: () => 'ops', required: false } },
  renew: { taskId: { gen: taskIdGen, required: true }, fence: { gen: fenceGen, required: true } },
  report: {
    taskId: { gen: taskIdGen, required: true },
    fence: { gen: fenceGen, required: true },
    status: { gen: (rng) => rng.pick(['done', 'failed', 'blocked', 'backlog']), required: true },
    note: { gen: str(0, 10_000), required: false },
    output: { gen: (rng) => randomJson(rng), required: false },
  },
  create_task: {
    title: { gen: str(1, 500), required: true },
    role: { gen: (_r, c) => c.role, required: true },
    priority: { gen: (rng) => rng.int(-10, 10), required: false },
    payload: { gen: (rng) => randomJson(rng), required: false },
    dependsOn: { gen: () => [987_654_321], required: false },
    idempotencyKey: { gen: str(1, 200), required: false },
  },
  run_started: { runId: { gen: str(1, 100), required: true } },
  run_step: { runId: { gen: str(1, 100), required: true }, step: { gen: str(1, 200), required: true }, ref: { gen: str(0, 2000), required: false } },
  run_result: {
    runId: { gen: str(1, 100), required: true },
    outcome: { gen: (rng) => rng.pick(['success', 'failed']), required: true },
    errorClass: { gen: (rng) => rng.pick(['retryable', 'fatal', 'needs_human']), required: false },
    error: { gen: str(0, 10_000), required: false },
    output: { gen: (rng) => randomJson(rng), required: false },
  },
  log: {
    taskId: { gen: taskIdGen, required: false },
    runId: { gen: str(1, 100), required: false },
    fence: { gen: fenceGen, required: false },
    lines: { gen: (rng) => Array.from({ length: rng.int(1, 3) }, () => ({ text: `s${bigString(rng, 0, 40)}`, ...(rng.chance(0.5) ? { stream: rng.pick(['stdout', 'stderr', 'agent']) } : {}) })), required: true },
  },
  usage: {
    taskId: { gen: taskIdGen, required: false },
    runId: { gen: str(1, 100), required: false },
    fence: { gen: fenceGen, required: false },
    inputTokens: { gen: (rng) => rng.int(0, 1000), required: false },
    outputTokens: { gen: (rng) => rng.int(0, 1000), required: false },
    costUsd: { gen: (rng) => rng.int(0, 100) / 100, required: false },
    model: { gen: str(1, 200), required: false },
  },
  artifact: {
    taskId: { gen: taskIdGen, required: false },
    runId: { gen: str(1, 100), required: false },
    fence: { gen: fenceGen, required: false },
    kind: { gen: (rng) => rng.pick(['workspace', 'file', 'link', 'session']), required: true },
    name: { gen: str(1, 200), required: true },
    data: { gen: () => ({ branch: 'gaffer/task-1', files: 1 }), required: true },
    diff: { gen: str(0, 2000), required: false },
    diffOffset: { gen: (rng) => rng.int(0, 10), required: false },
  },
  precheck_result: { requestId: { gen: str(1, 100), required: true }, ready: { gen: (rng) => rng.chance(0.5), required: true }, reason: { gen: str(0, 2000), required: false }, evidence: { gen: (rng) => randomJson(rng), required: false } },
};

// The catalogue must cover the protocol: a new request type fails here, not silently.
for (const t of AGENT_REQUEST_TYPES) if (!(t in FIELDS)) throw new Error(`fuzz catalogue misses request type ${t}`);

export interface WsCase {
  kind: string;
  /** The frame to send (text unless `binary`). */
  frame: string | Buffer;
  binary?: boolean;
  /** The id the reply must carry (null: a frame without a usable id). */
  replyId: string | number | null;
  /** Codes the reply may carry; `ok` for a reply that must succeed. */
  allowed: readonly string[];
}

/** The id a correct server echoes (PROTOCOL: string 1..100 or safe integer, else null). */
export function usableId(text: string): string | number | null {
  let msg: unknown;
  try {
    msg = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof msg !== 'object' || msg === null) return null;
  const id = (msg as { id?: unknown }).id;
  if (typeof id === 'string' && id.length >= 1 && [...id].length <= 100) return id; // code points, as zod counts
  if (typeof id === 'number' && Number.isSafeInteger(id)) return id;
  return null;
}

/** What a schema-valid frame may get back without changing state (undefined: unsafe, skip it). */
function validOutcome(msg: Record<string, unknown>, ctx: FuzzContext): readonly string[] | undefined {
  switch (msg.type) {
    case 'heartbeat':
      return ['ok'];
    case 'hello':
      return ['bad_request']; // this connection already said hello
    case 'renew':
    case 'report':
      return ['not_holder', 'not_found'];
    case 'run_started':
    case 'run_step':
    case 'run_result':
    case 'precheck_result':
      return ['not_found', 'not_holder'];
    case 'log':
    case 'usage':
      // Only the holder may send them; the fuzz holds nothing (and names one subject, or it is refused).
      return ['not_holder', 'not_found', 'bad_request'];
    case 'claim':
      return msg.role !== undefined && msg.role !== ctx.role ? ['forbidden'] : undefined;
    case 'create_task':
      if (msg.role !== ctx.role) return ['forbidden'];
      return Array.isArray(msg.dependsOn) && msg.dependsOn.includes(987_654_321) ? ['not_found'] : undefined;
    default:
      return undefined;
  }
}

let idSeq = 0;
function freshId(rng: Rng): string | number {
  return rng.chance(0.5) ? `f${++idSeq}` : 1_000_000 + ++idSeq;
}

function baseMessage(rng: Rng, type: string, ctx: FuzzContext): Record<string, unknown> {
  const msg: Record<string, unknown> = { id: freshId(rng), type };
  for (const [name, f] of Object.entries(FIELDS[type]!)) if (f.required || rng.chance(0.5)) msg[name] = f.gen(rng, ctx);
  return msg;
}

const MUTATIONS = ['wrongType', 'boundary', 'drop', 'badId', 'badType', 'bigString', 'extraPollution', 'nullField', 'deepPayload'] as const;

function mutate(rng: Rng, msg: Record<string, unknown>, ctx: FuzzContext): string {
  const type = String(msg.type);
  const fields = Object.keys(FIELDS[type] ?? {});
  const m = rng.pick(MUTATIONS);
  const field = fields.length > 0 ? rng.pick(fields) : 'id';
  switch (m) {
    case 'wrongType':
      msg[field] = wrongType(rng, msg[field] ?? FIELDS[type]?.[field]?.gen(rng, ctx) ?? 'x');
      break;
    case 'boundary':
      msg[field] = rng.chance(0.7) ? rng.pick(BOUNDARY_NUMBERS) : rng.pick(WEIRD_STRINGS);
      break;
    case 'drop': {
      const req = fields.filter((f) => FIELDS[type]![f]!.required);
      if (req.length > 0) delete msg[rng.pick(req)];
      else delete msg.type;
      break;
    }
    case 'badId':
      msg.id = rng.pick<unknown>([null, {}, [], true, 1.5, -1e30, '', 'x'.repeat(101), 2 ** 60, { id: 1 }]);
      break;
    case 'badType':
      msg.type = rng.pick<unknown>([null, 0, [], {}, '', 'HELLO', 'claim ', 'fly', '__proto__', 'constructor', 'toString', bigString(rng, 50, 300)]);
      break;
    case 'bigString':
      msg[field] = bigString(rng, 10_001, 200_000);
      break;
    case 'nullField':
      msg[field] = null;
      break;
    case 'extraPollution': {
      // JSON.parse makes "__proto__" an own key: it must neither pollute nor sneak a value in.
      const text = JSON.stringify(msg);
      return `{"__proto__":{"polluted":true,"role":"admin"},"constructor":{"prototype":{"polluted":true}},${text.slice(1)}`;
    }
    case 'deepPayload':
      return JSON.stringify({ ...msg, dependsOn: [987_654_321] }).replace(/}$/, `,"payload":${deepNesting(rng.int(1000, 60_000))}}`);
  }
  return JSON.stringify(msg);
}

/** One case for a session that already said hello. */
export function wsCase(rng: Rng, ctx: FuzzContext): WsCase {
  for (;;) {
    const r = rng.next();
    let text: string;
    let kind: string;
    if (r < 0.62) {
      const type = rng.pick([...AGENT_REQUEST_TYPES]);
      kind = `mutated ${type}`;
      text = mutate(rng, baseMessage(rng, type, ctx), ctx);
      if (text.length < 20_000 && !text.includes("[[[[") && rng.chance(0.25)) text = mutate(rng, parseObject(text) ?? {}, ctx);
    } else if (r < 0.72) {
      kind = 'truncated JSON';
      const full = JSON.stringify(baseMessage(rng, rng.pick([...AGENT_REQUEST_TYPES]), ctx));
      text = full.slice(0, rng.int(0, full.length - 1));
    } else if (r < 0.8) {
      kind = 'random JSON';
      text = JSON.stringify(randomJson(rng)) ?? 'null';
    } else if (r < 0.86) {
      kind = 'garbage text';
      text = rng.pick(['', ' ', 'null', 'true', '[]', '{}', '"str"', '1e999', 'NaN', '{"id":1,"type":"claim"', '}{', '{"id":1,"type":"claim"}{"id":2}', '\u0000', '{"id":1,"type":"claim"}\u0000', bigString(rng, 1, 3000)]);
    } else if (r < 0.92) {
      kind = 'valid-shape refusal';
      const type = rng.pick(['renew', 'report', 'run_started', 'run_step', 'run_result', 'precheck_result', 'claim', 'create_task', 'heartbeat', 'hello']);
      const msg = baseMessage(rng, type, ctx);
      if (type === 'claim') msg.role = 'ops';
      if (type === 'create_task') {
        if (rng.chance(0.5)) msg.role = 'ops';
        else msg.dependsOn = [987_654_321];
      }
      if (type === 'renew' || type === 'report') msg.taskId = rng.pick([ctx.heldTaskId, ctx.doneTaskId, 987_654_321]);
      text = JSON.stringify(msg);
    } else if (r < 0.96) {
      kind = 'idempotency conflict';
      text = JSON.stringify({ id: freshId(rng), type: 'create_task', title: `different ${rng.int(0, 1e6)}`, role: ctx.role, idempotencyKey: ctx.usedKey });
    } else {
      kind = 'pollution heartbeat';
      text = `{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"id":"${freshId(rng)}","type":"heartbeat","prototype":{"x":1}}`;
    }
    if (Buffer.byteLength(text) > MAX_FRAME_BYTES) continue; // oversized frames end the session: separate cases
    const parsed = safeParseValue(text);
    let allowed: readonly string[] = ['bad_request'];
    const v = parsed.ok ? agentRequest.safeParse(parsed.value) : undefined;
    if (v?.success) {
      const outcome = kind === 'idempotency conflict' ? ['conflict'] : validOutcome(v.data as Record<string, unknown>, ctx);
      if (!outcome) continue; // valid and would change state: not a fuzz case
      allowed = outcome;
    }
    return { kind, frame: text, replyId: usableId(text), allowed };
  }
}

/** `text` parsed as a JSON object, or undefined when it is not JSON or not an object. */
function parseObject(text: string): Record<string, unknown> | undefined {
  const p = safeParseValue(text);
  return p.ok && typeof p.value === 'object' && p.value !== null && !Array.isArray(p.value) ? (p.value as Record<string, unknown>) : undefined;
}

function safeParseValue(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Invalid UTF-8 byte sequences (sent as text frames: the transport must refuse them). */
export function invalidUtf8(rng: Rng): Buffer {
  return Buffer.from(rng.pick([[0xff], [0xc3, 0x28], [0xe2, 0x28, 0xa1], [0xf0, 0x28, 0x8c, 0x28], [0xed, 0xa0, 0x80], [0x7b, 0x22, 0xc0, 0xaf, 0x22, 0x7d]]));
}

// ---------------------------------------------------------------------------------------------
// HTTP

/** Whether the server routes `path` to the API (after URL normalisation, as the server does). */
export function isApiPath(path: string): boolean {
  const p = new URL(path, 'http://127.0.0.1').pathname;
  return p === '/api/v1' || p.startsWith('/api/v1/');
}

export interface HttpCase {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** True for /api/v1 paths: errors must be contracted JSON. */
  api: boolean;
}

interface RouteSpec {
  method: string;
  path: string;
  /** A body that would be valid (the fuzzer always breaks it). */
  body?: () => Record<string, unknown>;
}

export const API_ROUTES: RouteSpec[] = [
  { method: 'GET', path: '/status' },
  { method: 'POST', path: '/tokens', body: () => ({ name: 'fuzz', role: 'dev' }) },
  { method: 'GET', path: '/tokens' },
  { method: 'POST', path: '/tokens/:id/revoke', body: () => ({ reason: 'fuzz' }) },
  { method: 'DELETE', path: '/tokens/:id', body: () => ({ reason: 'fuzz' }) },
  { method: 'GET', path: '/instances' },
  { method: 'POST', path: '/tasks', body: () => ({ title: 'fuzz', role: 'dev' }) },
  { method: 'GET', path: '/tasks' },
  { method: 'GET', path: '/tasks/:id' },
  ...['release', 'cancel', 'retry', 'unblock'].map((e) => ({ method: 'POST', path: `/tasks/:id/${e}`, body: () => ({ reason: 'fuzz' }) })),
  { method: 'POST', path: '/tasks/:id/reprioritise', body: () => ({ priority: 1, reason: 'fuzz' }) },
  { method: 'POST', path: '/signals', body: () => ({ name: 'data-ready', key: '2026-11-30' }) },
  { method: 'GET', path: '/signals' },
  { method: 'GET', path: '/signals/:name/:key' },
  { method: 'DELETE', path: '/signals/:name/:key', body: () => ({ reason: 'fuzz' }) },
  { method: 'GET', path: '/audit' },
  { method: 'GET', path: '/audit/count' },
  { method: 'GET', path: '/audit/export' },
  { method: 'GET', path: '/audit/verify' },
  { method: 'POST', path: '/audit/verify-export' },
  // Jobs (server/api/jobs.ts).
  { method: 'POST', path: '/jobs', body: () => ({ name: 'fuzz-job', role: 'dev', schedule: { everyS: 600 } }) },
  { method: 'GET', path: '/jobs' },
  { method: 'POST', path: '/jobs/validate', body: () => ({ name: 'fuzz-job', role: 'dev', schedule: { everyS: 600 } }) },
  { method: 'POST', path: '/jobs/preview', body: () => ({ name: 'fuzz-job', role: 'dev', schedule: { everyS: 600 } }) },
  { method: 'GET', path: '/jobs/:id' },
  { method: 'PATCH', path: '/jobs/:id', body: () => ({ name: 'renamed', reason: 'fuzz' }) },
  ...['trigger', 'pause', 'resume', 'enable', 'disable'].map((e) => ({ method: 'POST', path: `/jobs/:id/${e}`, body: () => ({ reason: 'fuzz' }) })),
  ...['explain', 'preview', 'ledger', 'simulate'].map((e) => ({ method: 'GET', path: `/jobs/:id/${e}` })),
  { method: 'POST', path: '/jobs/:id/backfills', body: () => ({ slot: '2026-11-30', reason: 'fuzz' }) },
  { method: 'GET', path: '/runs' },
  { method: 'GET', path: '/runs/:id' },
  { method: 'GET', path: '/backfills' },
  ...['run', 'cancel', 'mark-done'].map((e) => ({ method: 'POST', path: `/backfills/:id/${e}`, body: () => ({ reason: 'fuzz' }) })),
  { method: 'POST', path: '/calendars', body: () => ({ id: 'fuzz-cal', name: 'Fuzz', timezone: 'UTC', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [] }) },
  { method: 'GET', path: '/calendars' },
  { method: 'GET', path: '/calendars/:id' },
  { method: 'PUT', path: '/calendars/:id', body: () => ({ name: 'Fuzz', timezone: 'UTC', workdays: [1], holidays: [], extraWorkdays: [] }) },
  { method: 'POST', path: '/calendars/:id/import', body: () => ({ ics: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n' }) },
  { method: 'GET', path: '/job-settings' },
  { method: 'PUT', path: '/job-settings/kill-switch', body: () => ({ on: true, reason: 'fuzz' }) },
  { method: 'PUT', path: '/job-settings/concurrency', body: () => ({ limit: 3, reason: 'fuzz' }) },
];

const QUERY_KEYS = ['limit', 'after', 'before', 'role', 'status', 'type', 'types', 'actor', 'subject', 'from', 'to', 'text', 'format', 'order', 'name', 'key', 'job', 'reason', 'token', 'contiguous', '__proto__', 'constructor', 'zz'];
const QUERY_VALUES = ['', '0', '-1', '1.5', '1e3', '1001', '9999999999999999999', 'abc', 'null', '%00', '%ZZ', '%', '2026-13-45T99:99:99Z', 'nope', 'dev', 'task:1', 'jsonl', 'csv', 'xml', 'asc', 'desc', 'true', '%3Cscript%3E', '..%2F..%2F', '%E2%80%AE'];
const PARAM_VALUES = ['0', '-1', '1.5', 'abc', '%00', '%ZZ', '%2F', '..', '9999999999999999999', '1e3', '987654321', 'tok_nope', '%20', '%E2%80%AE', 'x'.repeat(300)];

function fillPath(rng: Rng, template: string): string {
  return template
    .split('/')
    .map((seg) => (seg.startsWith(':') ? rng.pick(PARAM_VALUES) : seg))
    .join('/');
}

function query(rng: Rng): string {
  const n = rng.int(0, 4);
  if (n === 0) return '';
  const parts = Array.from({ length: n }, () => `${rng.pick(QUERY_KEYS)}=${rng.chance(0.1) ? 'x'.repeat(rng.int(100, 5000)) : rng.pick(QUERY_VALUES)}`);
  return `?${parts.join('&')}`;
}

/** A body that is never valid for its route (strict schemas refuse unknown keys, and worse). */
function badBody(rng: Rng, base: Record<string, unknown> | undefined): string | Buffer {
  const k = rng.int(0, 9);
  const b: Record<string, unknown> = { ...(base ?? { a: 1 }) };
  switch (k) {
    case 0:
      return `{"__proto__":{"polluted":true},${JSON.stringify({ ...b, zz: 1 }).slice(1)}`;
    case 1: {
      const f = rng.pick(Object.keys(b));
      b[f] = wrongType(rng, b[f]);
      b.zz = true;
      return JSON.stringify(b);
    }
    case 2:
      return JSON.stringify(rng.pick<unknown>([[], [b], 1, 'str', null, true]));
    case 3:
      return JSON.stringify({ ...b, zz: 1 }).slice(0, rng.int(1, 10)); // truncated JSON
    case 4:
      return Buffer.from([0x7b, 0xff, 0xfe, 0x7d]); // invalid UTF-8
    case 5:
      return JSON.stringify({ ...b, zz: deepNesting(3) }).replace('"[[[]]]"', deepNesting(rng.int(1000, 20_000)));
    case 6:
      return JSON.stringify({ ...b, reason: bigString(rng, 2001, 50_000), title: bigString(rng, 501, 2000), name: bigString(rng, 201, 1000), zz: 1 });
    case 7:
      return Buffer.alloc(300 * 1024, 0x20); // larger than the body limit
    case 8:
      return JSON.stringify({ ...b, constructor: { prototype: { polluted: true } }, zz: 1 });
    default:
      return JSON.stringify({ ...b, ...Object.fromEntries(Object.keys(b).map((key) => [key, rng.pick(BOUNDARY_NUMBERS)])), zz: 1 });
  }
}

export interface HttpFuzzContext {
  port: number;
  operatorToken: string;
  agentToken: string;
}

/** One HTTP case. Writes that carry the real operator token always have a body that is invalid. */
export function httpCase(rng: Rng, c: HttpFuzzContext): HttpCase {
  const route = rng.pick(API_ROUTES);
  const headers: Record<string, string> = { host: `127.0.0.1:${c.port}` };
  const auth = rng.int(0, 9);
  let authorized = false;
  if (auth <= 5) {
    headers.authorization = `${rng.pick(['Bearer', 'bearer', 'BEARER'])} ${c.operatorToken}`;
    authorized = true;
  } else if (auth === 6) headers.authorization = rng.pick([`Bearer ${c.agentToken}`, 'Bearer ', 'Basic dXNlcjpwYXNz', `Bearer ${c.operatorToken}x`, `Bearer ${c.operatorToken} extra`, `Token ${c.operatorToken}`]);
  else if (auth === 7) headers.authorization = `Bearer ${bigString(rng, 1, 10_000).replace(/[^\x21-\x7e]/g, 'a')}`;
  // Host and Origin variants (a foreign page, DNS rebinding).
  const hostish = rng.int(0, 15);
  if (hostish === 0) headers.host = `evil.example:${c.port}`;
  else if (hostish === 1) headers.host = 'evil.example';
  else if (hostish === 2) headers.host = `127.0.0.1:${c.port + 1}`;
  else if (hostish === 3) headers.origin = rng.pick(['http://evil.example', 'null', `http://127.0.0.1:${c.port + 1}`, 'https://127.0.0.1', `http://localhost.evil.example:${c.port}`]);
  else if (hostish === 4) headers['sec-fetch-site'] = 'cross-site';
  else if (hostish === 5) headers.host = `localhost:${c.port}`;
  else if (hostish === 6) headers.origin = `http://127.0.0.1:${c.port}`;
  const safeRequest = !authorized || hostish <= 4;
  let method = route.method;
  const m = rng.int(0, 9);
  if (m === 0) method = rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']);
  if (m === 1) method = rng.pick(['PROPFIND', 'PURGE', 'SEARCH', 'MKCOL', 'LOCK']);
  let path = `/api/v1${fillPath(rng, route.path)}${query(rng)}`;
  const p = rng.int(0, 14);
  if (p === 0) path = `/api/v1/${rng.pick(['', 'nope', 'tasks/1/2/3', '..', '%2e%2e/%2e%2e/etc/passwd', 'TASKS', 'tasks/', 'status/', '__proto__', 'constructor/prototype'])}`;
  if (p === 1) path = rng.pick(['/api/v1', '/api', '/api/v2/status', '//api/v1/status', '/api/v1//tasks', `/api/v1/tasks?${'a=1&'.repeat(2000)}`, `/api/v1/${'x'.repeat(rng.int(1000, 8000))}`]);
  const writes = method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
  let body: string | Buffer | undefined;
  if (writes || rng.chance(0.2)) {
    // With real authority, a write's body is always broken (or its path id cannot exist).
    body = safeRequest && rng.chance(0.3) ? JSON.stringify(route.body?.() ?? randomJson(rng)) : badBody(rng, route.body?.());
    if (!safeRequest && route.body && rng.chance(0.1)) {
      path = `/api/v1${route.path.replace(/:[a-z]+/g, '987654321')}?zz=1`; // unknown query key: refused before any write
    }
    headers['content-type'] = rng.pick(['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', '']);
    if (headers['content-type'] === '') delete headers['content-type'];
  }
  if (rng.chance(0.05)) headers['idempotency-key'] = rng.pick(['', 'x'.repeat(201), '\u00e9t\u00e9', 'k']);
  return { kind: `${method} ${route.path}${safeRequest ? '' : ' (authorized, invalid)'}`, method, path, headers, ...(body === undefined ? {} : { body }), api: isApiPath(path) };
}

/** Console endpoints of the headless server: refused unless authorized, never a crash. */
export function consoleCase(rng: Rng, c: HttpFuzzContext): HttpCase {
  const headers: Record<string, string> = { host: `127.0.0.1:${c.port}` };
  const k = rng.int(0, 5);
  if (k === 0) headers.authorization = `Bearer ${c.operatorToken}`;
  if (k === 1) headers.origin = 'http://evil.example';
  if (k === 2) headers.authorization = `Bearer ${c.agentToken}`;
  const method = rng.pick(['GET', 'POST', 'PUT', 'HEAD', 'DELETE']);
  const rpc = rng.pick(['tasks.create', 'tasks.cancel', 'tokens.create', 'tokens.revoke', 'settings.setKillSwitch', 'dashboard.get', 'nope', '__proto__', 'constructor', 'toString', '%ZZ', '']);
  const path = rng.pick([`/console/rpc/${rpc}`, '/console/export?format=xml', '/console/export?format=jsonl&from=nope', '/console/events', '/console/nope', `/console/rpc/${rpc}/extra`]);
  const body = method === 'POST' || method === 'PUT' ? badBody(rng, { title: 'x', role: 'dev', taskId: 1, reason: 'r', on: true, name: 'n', id: 'tok_x' }) : undefined;
  if (body !== undefined) headers['content-type'] = rng.pick(['application/json', 'text/plain']);
  return { kind: `console ${method} ${path.split('?')[0]}`, method, path, headers, ...(body === undefined ? {} : { body }), api: false };
}

/** Raw HTTP/1.1 that no client library would send (malformed framing, huge headers, smuggling). */
export function rawHttpCase(rng: Rng, c: HttpFuzzContext): { kind: string; raw: string | Buffer } {
  const host = `Host: 127.0.0.1:${c.port}\r\n`;
  const auth = `Authorization: Bearer ${c.operatorToken}\r\n`;
  const cases: Array<[string, string | Buffer]> = [
    ['garbage request line', 'HELLO WORLD\r\n\r\n'],
    ['lowercase method', `get /api/v1/status HTTP/1.1\r\n${host}${auth}\r\n`],
    ['HTTP/9.9', `GET /api/v1/status HTTP/9.9\r\n${host}${auth}\r\n`],
    ['HTTP/0.9', 'GET /api/v1/status\r\n\r\n'],
    ['no Host', `GET /api/v1/status HTTP/1.1\r\n${auth}\r\n`],
    ['two Hosts', `GET /api/v1/status HTTP/1.1\r\n${host}Host: evil.example\r\n${auth}\r\n`],
    ['absolute-form target', `GET http://evil.example/api/v1/status HTTP/1.1\r\n${host}${auth}\r\n`],
    ['header without colon', `GET /api/v1/status HTTP/1.1\r\n${host}${auth}Broken header\r\n\r\n`],
    ['huge header', `GET /api/v1/status HTTP/1.1\r\n${host}${auth}X-Big: ${'a'.repeat(rng.int(17_000, 80_000))}\r\n\r\n`],
    ['many headers', `GET /api/v1/status HTTP/1.1\r\n${host}${auth}${'X-A: 1\r\n'.repeat(3000)}\r\n`],
    ['CL and TE (smuggling)', `POST /api/v1/tasks HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nPOST /api/v1/tasks HTTP/1.1\r\n${host}${auth}Content-Length: 2\r\n\r\n{}`],
    ['bad chunk size', `POST /api/v1/tasks HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`],
    ['short body', `POST /api/v1/tasks HTTP/1.1\r\n${host}${auth}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`],
    ['negative length', `POST /api/v1/tasks HTTP/1.1\r\n${host}${auth}Content-Length: -5\r\n\r\n`],
    ['NUL in path', `GET /api/v1/sta\u0000tus HTTP/1.1\r\n${host}${auth}\r\n`],
    ['CR injection', `GET /api/v1/status HTTP/1.1\r\n${host}X-A: a\rInjected: 1\r\n${auth}\r\n`],
    ['binary noise', Buffer.from(Array.from({ length: rng.int(1, 2000) }, () => rng.int(0, 255)))],
    ['websocket upgrade to the API', `GET /api/v1/status HTTP/1.1\r\n${host}${auth}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`],
    ['agent upgrade, bad version', `GET /agent HTTP/1.1\r\n${host}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 99\r\n\r\n`],
    ['agent upgrade, no key', `GET /agent HTTP/1.1\r\n${host}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`],
    ['agent upgrade, evil host', `GET /agent HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`],
  ];
  const [kind, raw] = rng.pick(cases);
  return { kind, raw };
}
