/**
 * The slot ledger counted by local day or hour of the job's zone: what the Runs view's heat map
 * and the ledger of a frequent job show (a job every minute has 1 440 slots a day — a list of
 * them is a wall, their counts are an answer).
 *
 * Invariants:
 * 1. Each slot is counted under the disposition the ledger gives it (`ledger()` decides, once),
 *    so the counts and the slot list never disagree.
 * 2. One call reads at most `BUCKET_SLOTS` slots; `next` says where to go on. A bucket may be split
 *    over two calls: the caller adds the counts of equal keys.
 * 3. Read-only.
 */
import type { LedgerBucket, LedgerBucketsResult } from '../../common/job-schema';
import { ledger, type InsightDeps } from './insight';
import { zoneOf } from './plan';
import { specOf, type JobRow } from './rows';
import { localString } from './time-util';

/** Slots one call reads at most (about 150 ms of schedule arithmetic for a per-minute job). */
export const BUCKET_SLOTS = 20_000;

export function ledgerBuckets(deps: InsightDeps, job: JobRow, from: number, to: number, by: 'day' | 'hour', now: number): LedgerBucketsResult {
  const zone = zoneOf(specOf(job));
  const page = ledger(deps, job, from, to, BUCKET_SLOTS, now);
  let items = page.items;
  let next: string | null = page.next;
  // `ledger` pages from `next` inclusive: leave the slots at that instant to the next call (invariant 2).
  if (next !== null) {
    const cut = items.filter((e) => e.at !== next);
    if (cut.length > 0) items = cut;
    else next = new Date(Date.parse(next) + 1).toISOString();
  }
  const keyLength = by === 'day' ? 10 : 13;
  const buckets = new Map<string, LedgerBucket>();
  for (const e of items) {
    const key = (e.local ?? localString(Date.parse(e.at), zone)).slice(0, keyLength);
    let b = buckets.get(key);
    if (!b) buckets.set(key, (b = { key, first: e.at, slots: 0, counts: {} }));
    b.slots++;
    b.counts[e.disposition] = (b.counts[e.disposition] ?? 0) + 1;
  }
  return { zone, by, buckets: [...buckets.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)), next };
}
