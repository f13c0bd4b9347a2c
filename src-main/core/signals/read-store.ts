/** Read models over `signals` for `GET /status`. Read-only. */
import type { Db } from '../db/open';

export type SignalReads = ReturnType<typeof prepareSignalReads>;

export function prepareSignalReads(db: Db) {
  const count = db.prepare<[], { n: number }>('SELECT count(*) AS n FROM signals');
  return { count: (): number => count.get()!.n };
}
