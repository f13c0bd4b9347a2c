/**
 * Identifiers: row ids with a readable prefix, and the trace ids that tie audit rows together.
 *
 * A row id is 9 bytes in base64url: 6 bytes of the creation time (ms) and 3 of a per-process
 * counter that starts at a random value. Ids made close in time share their first characters, so
 * the rows and index entries of a burst (a thousand runs claimed at once, their audit subjects)
 * land in a few neighbouring pages instead of one random page each. Within a process ids never
 * repeat (the counter moves on every id); across processes a repeat needs the same millisecond and
 * the same counter value. Ids say when they were made; they are not secrets (tokens are).
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

export function newId(prefix: string): string {
  const b = Buffer.allocUnsafe(9);
  b.writeUIntBE(Date.now(), 0, 6);
  counter = (counter + 1) % 0x1000000;
  b.writeUIntBE(counter, 6, 3);
  return `${prefix}_${b.toString('base64url')}`;
}

/** An instance's id is `inst_…` (core/instances). */
export const INSTANCE_ID_PREFIX = 'inst';

/** Instance ids are the only actors of lock claims, renewals and releases (the audit indexes rely on it). */
export function isInstanceActor(actor: string): boolean {
  return actor.startsWith(`${INSTANCE_ID_PREFIX}_`);
}
