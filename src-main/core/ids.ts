/** Random identifiers: row ids with a readable prefix, and the trace ids that tie audit rows together. */
import { randomBytes } from 'node:crypto';

export function newTraceId(): string {
  return randomBytes(8).toString('hex');
}

export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(9).toString('base64url')}`;
}
