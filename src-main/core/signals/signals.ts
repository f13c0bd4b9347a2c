/**
 * Readiness signals (SPEC §5): named flags set for a business key through the API, e.g.
 * `data-ready` for `2026-11-30`. A job precondition `{kind:'signal', name}` asks whether signal
 * `name` is set for the slot's business key.
 *
 * Invariants:
 * 1. One row per (name, key). Setting it again refreshes `setAt`, `actor` and `value`.
 * 2. Every set and clear is audited (`signal.set`, `signal.clear`) in the same transaction, with
 *    subject `signal:<name>/<key>` (a name cannot contain "/", so the subject parses back).
 * 3. Reads never write.
 */
import { GafferError } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import type { Page, Signal } from '../../common/model';
import { clearSignalInput, listSignalsInput, setSignalInput, signalKey, signalName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { SqlWhere } from '../sql-where';
import { prepareSignalStatements, signalRows, type SignalRow } from './store';

export interface SignalVerdict {
  ready: boolean;
  reason: string;
  evidence: { name: string; key: string; setAt: string | null; actor: string | null };
}

export function signalSubject(name: string, key: string): string {
  return `signal:${name}/${key}`;
}

function toSignal(r: SignalRow): Signal {
  const s: Signal = { name: r.name, key: r.key, setAt: isoTime(r.set_at), actor: r.actor };
  if (r.value !== null) s.value = JSON.parse(r.value);
  return s;
}

function encodeCursor(name: string, key: string): string {
  return Buffer.from(JSON.stringify([name, key])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'string' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    /* fall through */
  }
  throw new GafferError('bad_request', 'invalid signal cursor "after"');
}

export class Signals {
  private readonly q;

  constructor(private readonly ctx: CoreContext) {
    this.q = prepareSignalStatements(ctx.db);
  }

  /** Sets (or refreshes) a signal. `created` is false when it was already set. */
  set(input: unknown, traceId?: string): { signal: Signal; created: boolean } {
    const { name, key, actor, value, reason } = parseOrThrow(setSignalInput, input, 'signal');
    return this.ctx.store.write(() => {
      const before = this.q.get.get(name, key);
      const now = this.ctx.clock.now();
      this.q.upsert.run(name, key, value === undefined ? null : JSON.stringify(value), actor, now);
      this.ctx.audit.append({
        type: 'signal.set',
        actor,
        subject: signalSubject(name, key),
        detail: {
          name,
          key,
          ...(value === undefined ? {} : { value }),
          ...(reason === undefined ? {} : { reason }),
          ...(before ? { previousSetAt: isoTime(before.set_at), previousActor: before.actor } : {}),
        },
        traceId,
      });
      return { signal: toSignal(this.q.get.get(name, key)!), created: !before };
    });
  }

  /** Removes a signal (with a reason). Unknown → `not_found`. */
  clear(input: unknown): Signal {
    const { name, key, actor, reason } = parseOrThrow(clearSignalInput, input, 'signal');
    return this.ctx.store.write(() => {
      const row = this.q.get.get(name, key);
      if (!row) throw new GafferError('not_found', `signal ${name} is not set for ${key}`);
      this.q.delete.run(name, key);
      this.ctx.audit.append({
        type: 'signal.clear',
        actor,
        subject: signalSubject(name, key),
        detail: { name, key, reason, setAt: isoTime(row.set_at), setBy: row.actor },
      });
      return toSignal(row);
    });
  }

  /**
   * The signal, or undefined. A name or key that could never have been set (invalid) is simply
   * not set: readers such as precondition checks get an answer, not an exception.
   */
  get(name: string, key: string): Signal | undefined {
    if (!signalName.safeParse(name).success || !signalKey.safeParse(key).success) return undefined;
    const r = this.q.get.get(name, key);
    return r && toSignal(r);
  }

  /**
   * The verdict a `{kind:'signal', name}` precondition reports for a slot's business key, with
   * the evidence it looked at (SPEC §5: every check returns a reason and evidence).
   */
  check(name: string, key: string): SignalVerdict {
    const s = this.get(name, key);
    return s
      ? { ready: true, reason: `signal ${name} set for ${key} at ${s.setAt} by ${s.actor}`, evidence: { name, key, setAt: s.setAt, actor: s.actor } }
      : { ready: false, reason: `signal ${name} is not set for ${key}`, evidence: { name, key, setAt: null, actor: null } };
  }

  /** Signals ordered by (name, key); `next` is an opaque cursor. */
  list(input: unknown = {}): Page<Signal> {
    const f = parseOrThrow(listSignalsInput, input, 'signal filter');
    const limit = f.limit ?? 100;
    const where = new SqlWhere();
    if (f.name !== undefined) where.and('name = ?', f.name);
    if (f.key !== undefined) where.and('key = ?', f.key);
    if (f.after !== undefined) where.and('(name, key) > (?, ?)', ...decodeCursor(f.after));
    const rows = signalRows(this.ctx.db, where, limit + 1);
    const items = rows.slice(0, limit).map(toSignal);
    const last = items[items.length - 1];
    return { items, next: rows.length > limit && last ? encodeCursor(last.name, last.key) : null };
  }
}
