/**
 * Idempotency store (SPEC §4). A key repeated inside the window returns the first result;
 * the same key with a different body is a conflict; after the window the key is free again.
 */
import { createHash } from 'node:crypto';
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

export class IdempotencyStore {
  private readonly find;
  private readonly put;
  private readonly drop;
  private readonly purgeOld;

  constructor(
    db: Db,
    private readonly windowMs: () => number,
  ) {
    this.find = db.prepare<[string, string], { body_hash: string; result: string; created_at: number }>(
      'SELECT body_hash, result, created_at FROM idempotency WHERE scope = ? AND key = ?',
    );
    this.put = db.prepare('INSERT INTO idempotency (scope, key, body_hash, result, created_at) VALUES (?,?,?,?,?)');
    this.drop = db.prepare('DELETE FROM idempotency WHERE scope = ? AND key = ?');
    this.purgeOld = db.prepare('DELETE FROM idempotency WHERE rowid IN (SELECT rowid FROM idempotency WHERE created_at <= ? LIMIT ?)');
  }

  /** Inside a write: the cached result for a live key with the same body, or undefined. */
  lookup<T>(scope: string, key: string, hash: string, now: number): T | undefined {
    const row = this.find.get(scope, key);
    if (!row) return undefined;
    if (row.created_at <= now - this.windowMs()) {
      this.drop.run(scope, key);
      return undefined;
    }
    if (row.body_hash !== hash) {
      throw new GafferError('conflict', `idempotency key "${key}" was already used with a different body`);
    }
    return JSON.parse(row.result) as T;
  }

  remember(scope: string, key: string, hash: string, result: unknown, now: number): void {
    this.put.run(scope, key, hash, JSON.stringify(result), now);
  }

  /** Deletes up to `limit` expired keys; returns how many. */
  purge(now: number, limit = 500): number {
    return this.purgeOld.run(now - this.windowMs(), limit).changes;
  }
}
