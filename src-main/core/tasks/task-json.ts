/**
 * A Task as JSON text, with its stored JSON columns spliced in as they are (issue 32): the hub's
 * reply to every claim and report carries one or two Tasks, and `JSON.stringify` walked each one's
 * payload, dependencies, output and checks again — values `rowToTask` had just parsed from that
 * very text.
 *
 * Invariants:
 * 1. `taskJson(t)` is byte for byte `JSON.stringify(t)` (task-json.test.ts compares them over every
 *    optional field). The stored columns are written only as `JSON.stringify` output, which
 *    `JSON.parse` then `JSON.stringify` give back unchanged, so splicing them changes no byte.
 * 2. Only a Task built by `rowToTask` from a row has stored text (`rememberStored`); any other value
 *    (a Task spread into a new object, one built elsewhere) is not one: `taskJson` returns
 *    undefined and the caller uses `JSON.stringify`. Tasks are values: never changed once built.
 */
import type { Task } from '../../common/model';

/** The stored text of a Task's JSON columns: payload, dependsOn, output (or null), verify (or null). */
type Stored = readonly [payload: string, dependsOn: string, output: string | null, verify: string | null];

const stored = new WeakMap<object, Stored>();

/** Invariant 2: `task` was built from these columns (task-repo.ts `rowToTask`). */
export function rememberStored(task: Task, payload: string, dependsOn: string, output: string | null, verify: string | null): void {
  stored.set(task, [payload, dependsOn, output, verify]);
}

const str = JSON.stringify as (s: string | null) => string;
const num = (n: number) => (Number.isFinite(n) ? String(n) : 'null');

/** Invariant 1: `JSON.stringify(task)`, or undefined when `task` has no stored text (invariant 2). */
export function taskJson(task: object): string | undefined {
  const s = stored.get(task);
  if (s === undefined) return undefined;
  const t = task as Task;
  // The keys in rowToTask's order (the order JSON.stringify walks them in).
  let out = `{"id":${num(t.id)},"title":${str(t.title)},"role":${str(t.role)},"status":${str(t.status)},"priority":${num(t.priority)},"payload":${s[0]},"dependsOn":${s[1]},"attempt":${num(t.attempt)},"previouslyExpired":${t.previouslyExpired},"fence":${num(t.fence)},"unmetDependencies":${num(t.unmetDependencies)},"note":${str(t.note)},"output":${s[2] ?? 'null'},"createdAt":${str(t.createdAt)},"updatedAt":${str(t.updatedAt)},"traceId":${str(t.traceId)}`;
  if (t.verify !== undefined) out += `,"verify":${s[3]}`;
  if (t.previousError !== undefined) out += `,"previousError":${str(t.previousError)}`;
  if (t.disposition !== undefined) out += `,"disposition":${str(t.disposition)}`;
  if (t.answer !== undefined) out += `,"answer":${str(t.answer)}`;
  if (t.resumeSession !== undefined) out += `,"resumeSession":${str(t.resumeSession)}`;
  const l = t.lock;
  out +=
    l === null
      ? ',"lock":null}'
      : `,"lock":{"instanceId":${str(l.instanceId)},"fence":${num(l.fence)},"claimedAt":${str(l.claimedAt)},"expiresAt":${str(l.expiresAt)}}}`;
  return out;
}

/**
 * `JSON.stringify(value)` for a reply's result: plain objects (to `depth` levels) are walked here so
 * that a Task inside is written by `taskJson`; anything else goes to `JSON.stringify` whole.
 */
export function replyJson(value: unknown, depth = 3): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value) ?? 'null';
  const task = taskJson(value);
  if (task !== undefined) return task;
  if (depth === 0 || Object.getPrototypeOf(value) !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    return JSON.stringify(value);
  }
  let out = '{';
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    // As JSON.stringify: keys whose value has no JSON form are left out.
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${replyJson(v, depth - 1)}`;
  }
  return `${out}}`;
}
