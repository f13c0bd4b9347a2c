/**
 * Identifiers: row ids with a readable prefix, and the trace ids that tie audit rows together.
 *
 * A row id is 9 bytes in 12 characters: 6 bytes of the creation time (ms) and 3 of a per-process
 * counter that starts at a random value. Ids made close in time share their first characters, so
 * the rows and index entries of a burst (a thousand runs claimed at once, their audit subjects)
 * land in a few neighbouring pages instead of one random page each. Within a process ids never
 * repeat (the counter moves on every id); across processes a repeat needs the same millisecond and
 * the same counter value. Ids say when they were made; they are not secrets (tokens are).
 *
 * The 72 bits are written 6 at a time with the base64url characters in ASCII order, so ids of one
 * process sort as text in the order they were made, but for the counter's wrap once in 16M ids
 * (plain base64url does not: 'z' encodes 51, '0' 52). Lists that fall back to the id for rows
 * made in the same instant rely on it.
 */
import { randomBytes, randomInt } from 'node:crypto';

let counter = randomInt(0, 0x1000000);

/** Random bytes are drawn in blocks: one system call per 512 trace ids, not one per id. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let poolAt = 0;

function randomSlice(n: number): Buffer {
  if (poolAt + n > pool.length) {
    pool = randomBytes(POOL_BYTES);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

export function newTraceId(): string {
  return randomSlice(8).toString('hex');
}

const SORTABLE = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';

export function newId(prefix: string, now = Date.now()): string {
  counter = (counter + 1) % 0x1000000;
  // 48 bits of time and 24 of counter: 8 characters, then 4.
  let out = `${prefix}_`;
  for (let shift = 42; shift >= 0; shift -= 6) out += SORTABLE[Math.floor(now / 2 ** shift) % 64];
  for (let shift = 18; shift >= 0; shift -= 6) out += SORTABLE[(counter >> shift) & 63];
  return out;
}

/** An instance's id is `inst_…` (core/instances). */
export const INSTANCE_ID_PREFIX = 'inst';

/** Instance ids are the only actors of lock claims, renewals and releases (the audit indexes rely on it). */
export function isInstanceActor(actor: string): boolean {
  return actor.startsWith(`${INSTANCE_ID_PREFIX}_`);
}
