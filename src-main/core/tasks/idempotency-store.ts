/**
 * Idempotency store (SPEC §4). A key repeated inside the window returns the first result;
 * the same key with a different body is a conflict; after the window the key is free again.
 *
 * Invariants:
 * 1. The window is measured on monotonic time, so no wall-clock step shortens or lengthens it:
 *    `created_at` is a reading of `steadyTime` — wall time at the store's creation plus monotonic
 *    time since — not of the wall clock. Within one process a key lives exactly the window.
 * 2. Across a restart the steady time starts again from the wall clock. A key stamped later than
 *    the new process's "now" (the wall clock was stepped back while Gaffer was down, or the old
 *    process had seen a backward step) counts as created now: it lives at most one more window
 *    (lookup treats it as fresh; the watchdog's purge re-stamps it), never an extra hour.
 * 3. Keys are scoped per caller (PROTOCOL §17): each agent token has its own keys, the operator
 *    (every operator channel: HTTP, console, desktop) has one set. `invoice-42` from one agent and
 *    from the operator are two intents. A key stored before keys were scoped whose creator could
 *    not be told (migration 017) stays in the legacy scope, which every caller's lookup still
 *    consults after its own, until it expires with its window.
 */
import { createHash } from 'node:crypto';
import { steadyTime, type Clock } from '../../common/clock';
import { GafferError } from '../../common/errors';
import type { Db } from '../db/open';

/** Stable JSON: object keys sorted, so `{a,b}` and `{b,a}` hash alike. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

export function bodyHash(v: unknown): string {
  return createHash('sha256').update(canonicalJson(v)).digest('hex');
}

/** Whose keys (invariant 3): `token:<id>` for an agent token, `operator` for the operator. */
export type IdempotencyCaller = `token:${string}` | 'operator' | `actor:${string}` | 'agent';

export const OPERATOR_CALLER = 'operator';
/** Agents connected without a token (a development mode) share one set of keys. */
export const TOKENLESS_AGENT_CALLER = 'agent';

/** The caller of an agent session: its token, or the token-less agents. */
export function agentCaller(tokenId: string | null | undefined): IdempotencyCaller {
  return tokenId ? `token:${tokenId}` : TOKENLESS_AGENT_CALLER;
}

/** The caller an actor stands for when none is named: every `operator:*` actor is the operator. */
export function callerOfActor(actor: string): IdempotencyCaller {
  return actor.startsWith('operator:') ? OPERATOR_CALLER : `actor:${actor}`;
}

/** The scope under which `caller`'s keys for `what` (e.g. `task.create`) are kept; `what` alone is the legacy scope. */
export function callerScope(what: string, caller: IdempotencyCaller): string {
  return `${what}:${caller}`;
}

export class IdempotencyStore {
  private readonly find;
  private readonly put;
  private readonly drop;
  private readonly purgeOld;
  private readonly restampFuture;
  /** Invariant 1. */
  private readonly now: () => number;

  constructor(
    db: Db,
    clock: Pick<Clock, 'now' | 'monotonic'>,
    private readonly windowMs: () => number,
  ) {
    this.now = steadyTime(clock);
    this.find = db.prepare<[string, string], { body_hash: string; result: string; created_at: number }>(
      'SELECT body_hash, result, created_at FROM idempotency WHERE scope = ? AND key = ?',
    );
    this.put = db.prepare('INSERT INTO idempotency (scope, key, body_hash, result, created_at) VALUES (?,?,?,?,?)');
    this.drop = db.prepare('DELETE FROM idempotency WHERE scope = ? AND key = ?');
    this.purgeOld = db.prepare('DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE created_at <= ? LIMIT ?)');
    this.restampFuture = db.prepare('UPDATE idempotency SET created_at = ? WHERE created_at > ?');
  }

  /**
   * Inside a write: the cached result for a live key with the same body, or undefined. With
   * `legacy`, a key kept there (invariant 3) counts too, after the caller's own.
   */
  lookup<T>(scope: string, key: string, hash: string, legacy?: string): T | undefined {
    const own = this.lookupIn<T>(scope, key, hash);
    return own !== undefined || legacy === undefined ? own : this.lookupIn<T>(legacy, key, hash);
  }

  private lookupIn<T>(scope: string, key: string, hash: string): T | undefined {
    const row = this.find.get(scope, key);
    if (!row) return undefined;
    if (row.created_at <= this.now() - this.windowMs()) {
      this.drop.run(scope, key);
      return undefined;
    }
    if (row.body_hash !== hash) {
      throw new GafferError('conflict', `idempotency key "${key}" was already used with a different body`);
    }
    return JSON.parse(row.result) as T;
  }

  remember(scope: string, key: string, hash: string, result: unknown): void {
    this.put.run(scope, key, hash, JSON.stringify(result), this.now());
  }

  /** Inside a write: deletes up to `limit` expired keys (and re-stamps keys from the future, invariant 2); returns how many were deleted. */
  purge(limit = 500): number {
    const now = this.now();
    this.restampFuture.run(now, now);
    return this.purgeOld.run(now - this.windowMs(), limit).changes;
  }
}
