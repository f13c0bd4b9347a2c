/**
 * The ok reply's JSON, written by hand for the task objects in it (issue 32, "a reply serialised
 * once, cheaply").
 *
 * On Node 20 `JSON.stringify` walks a task object generically: about 1.2 µs for a 440-byte task,
 * and a report+claimNext reply carries two tasks. Most of a task is numbers, booleans and short
 * ASCII strings whose JSON is the value itself between quotes, so a task written field by field,
 * in the order `rowToTask` gives them, costs a third of that.
 *
 * Invariants:
 * 1. `replyJson(id, result)` is byte for byte `JSON.stringify({ id, ok: true, result })` for every
 *    reply whose tasks come from `rowToTask` (reply-json.test.ts). A task in another key order
 *    still gets the same keys and values, only ordered as a task from the database would be.
 * 2. Every key of `Task` is written, an optional one only when present (left out when undefined,
 *    as JSON.stringify leaves it out; a required one that is missing is written `null`, so the
 *    text is JSON whatever the object holds). reply-json.test.ts holds a task with every key of
 *    `Required<Task>` (a new Task field fails to typecheck there until it is filled in, then fails
 *    the test until it is written here).
 * 3. Strings are written bare only when they are printable ASCII without `"` or `\`; anything else
 *    goes through JSON.stringify (escapes, lone surrogates).
 * 4. Only the value under a `task` key (claim, report, create_task results and `next`) is taken for
 *    a task; anything else in a result is JSON.stringify's.
 */
import type { Task } from '../../common/model';
import type { WireId } from './wire';

const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** Any value's JSON; `null` where JSON.stringify gives nothing (undefined, a function), so the text stays JSON. */
const any = (v: unknown): string => JSON.stringify(v) ?? 'null';

/** A string's JSON (invariant 3). */
const str = (s: unknown): string => (s === null ? 'null' : typeof s === 'string' && PLAIN.test(s) ? `"${s}"` : any(s));

const num = (n: unknown): string => (typeof n === 'number' && Number.isFinite(n) ? String(n) : any(n));

const bool = (b: unknown): string => (b === true ? 'true' : b === false ? 'false' : any(b));

/** An optional member: nothing when it is absent or JSON.stringify would leave it out. */
const opt = (key: string, v: unknown): string => {
  const text = v === undefined ? undefined : JSON.stringify(v);
  return text === undefined ? '' : `,"${key}":${text}`;
};

const lockJson = (l: Task['lock']): string =>
  l === null || l === undefined
    ? 'null'
    : '{"instanceId":' + str(l.instanceId) + ',"fence":' + num(l.fence) + ',"claimedAt":' + str(l.claimedAt) + ',"expiresAt":' + str(l.expiresAt) + '}';

/** One task's JSON, its keys in rowToTask's order. */
export function taskJson(t: Task): string {
  const rare =
    t.verify === undefined && t.previousError === undefined && t.disposition === undefined && t.verification === undefined && t.answer === undefined && t.resumeSession === undefined
      ? ''
      : opt('verify', t.verify) + opt('previousError', t.previousError) + opt('disposition', t.disposition) + opt('verification', t.verification) + opt('answer', t.answer) + opt('resumeSession', t.resumeSession);
  return (
    '{"id":' + num(t.id) + ',"title":' + str(t.title) + ',"role":' + str(t.role) + ',"status":' + str(t.status) + ',"priority":' + num(t.priority) +
    ',"payload":' + any(t.payload) + ',"dependsOn":' + any(t.dependsOn) + ',"attempt":' + num(t.attempt) + ',"previouslyExpired":' + bool(t.previouslyExpired) +
    ',"fence":' + num(t.fence) + ',"unmetDependencies":' + num(t.unmetDependencies) + ',"note":' + str(t.note) + ',"output":' + any(t.output) +
    ',"createdAt":' + str(t.createdAt) + ',"updatedAt":' + str(t.updatedAt) + ',"traceId":' + str(t.traceId) + rare + ',"lock":' + lockJson(t.lock) + '}'
  );
}

/**
 * The JSON of a result that carries a task (invariant 4): claim `{task, lock}`, report `{task,
 * replayed, next?}` (`next` a claim result), create_task `{task, replayed}`, members in their own
 * order. Undefined for any other member or shape: that result is JSON.stringify's as a whole.
 */
function taskResultJson(r: Record<string, unknown>): string | undefined {
  const keys = Object.keys(r);
  if (keys[0] !== 'task') return undefined;
  const task = r.task;
  let out = task === null ? '{"task":null' : typeof task === 'object' && Object.getPrototypeOf(task) === Object.prototype ? '{"task":' + taskJson(task as Task) : undefined;
  if (out === undefined) return undefined;
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i];
    const v = r[key!];
    if (key === 'replayed' && typeof v === 'boolean') out += v ? ',"replayed":true' : ',"replayed":false';
    else if (key === 'lock' && typeof v === 'object' && v !== null) out += ',"lock":' + any(v);
    else if (key === 'next' && typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype) {
      const next = taskResultJson(v as Record<string, unknown>);
      if (next === undefined) return undefined;
      out += ',"next":' + next;
    } else if (v !== undefined) return undefined;
  }
  return out + '}';
}

/** `JSON.stringify({ id, ok: true, result })` (invariant 1). */
export function replyJson(id: WireId, result: unknown): string {
  const r =
    typeof result === 'object' && result !== null && (result as { task?: unknown }).task !== undefined && Object.getPrototypeOf(result) === Object.prototype
      ? (taskResultJson(result as Record<string, unknown>) ?? JSON.stringify(result))
      : JSON.stringify(result);
  return r === undefined ? `{"id":${str(id)},"ok":true}` : `{"id":${str(id)},"ok":true,"result":${r}}`;
}
