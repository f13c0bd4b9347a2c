/**
 * IANA zone offsets and local-time resolution, internal to the schedule library.
 *
 * Invariants:
 * - Offsets come from luxon (`IANAZone.offset`, backed by the platform's tz database); this module
 *   only memoises them per clock hour. Assumption (true for every zone in tzdata): a zone changes
 *   its UTC offset at most once within any one UTC clock hour. Transitions are located to the second.
 * - `resolveLocal` states the DST rule of the whole library explicitly:
 *   - a local time that occurs once maps to that instant (`exact`);
 *   - a local time that occurs twice (fall back) maps to the EARLIER instant (`ambiguous`,
 *     `laterAt` carries the second one);
 *   - a local time that does not exist (spring forward) maps to the first valid instant after the
 *     gap, i.e. the transition instant (`gap`; 02:30 on a US spring-forward day → 03:00 local).
 * - Nothing reads the clock; the memo is a pure cache (bounded; cleared when it grows too large).
 */
import { IANAZone } from 'luxon';
import { DAY_MS, HOUR_MS } from './civil';

interface Transition {
  /** First instant (ms, whole second) with the new offset. */
  at: number;
  before: number;
  after: number;
}

const MAX_CACHE_ENTRIES = 400_000;

class ZoneOffsets {
  private readonly zone: IANAZone;
  private readonly hours = new Map<number, number | Transition>();

  constructor(name: string) {
    this.zone = IANAZone.create(name);
  }

  private raw(ts: number): number {
    return Math.round(this.zone.offset(ts) * 60_000);
  }

  /** Offset in ms (local = utc + offset) at instant `ts`. */
  offsetMs(ts: number): number {
    const h = Math.floor(ts / HOUR_MS);
    let entry = this.hours.get(h);
    if (entry === undefined) {
      entry = this.computeHour(h);
      if (this.hours.size >= MAX_CACHE_ENTRIES) this.hours.clear();
      this.hours.set(h, entry);
    }
    if (typeof entry === 'number') return entry;
    return ts < entry.at ? entry.before : entry.after;
  }

  private computeHour(h: number): number | Transition {
    const start = h * HOUR_MS;
    const end = start + HOUR_MS;
    const before = this.raw(start);
    const after = this.raw(end);
    if (before === after) return before;
    // The change happens in (start, end]; find the first whole second with a different offset.
    let lo = start / 1000; // offset there is `before`
    let hi = end / 1000; // offset there is `after`
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.raw(mid * 1000) === before) lo = mid;
      else hi = mid;
    }
    return { at: hi * 1000, before, after };
  }
}

const zones = new Map<string, ZoneOffsets>();

/** Memo of zone-name validity: luxon's check builds an Intl formatter per call (~0.2 ms). */
const validity = new Map<string, boolean>();

export function isValidZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.length === 0) return false;
  let ok = validity.get(name);
  if (ok === undefined) {
    ok = IANAZone.isValidZone(name);
    if (validity.size > 1000) validity.clear();
    validity.set(name, ok);
  }
  return ok;
}

function offsets(name: string): ZoneOffsets {
  let z = zones.get(name);
  if (!z) {
    if (!isValidZone(name)) throw new RangeError(`unknown time zone '${name}'`);
    z = new ZoneOffsets(name);
    zones.set(name, z);
  }
  return z;
}

/** UTC offset in ms of `zone` at instant `ts` (local wall clock = ts + offset). */
export function offsetAt(zone: string, ts: number): number {
  return offsets(zone).offsetMs(ts);
}

/** The local wall-clock reading of an instant, as a naive time. */
export function toNaive(zone: string, ts: number): number {
  return ts + offsets(zone).offsetMs(ts);
}

/**
 * True when the wall-clock reading of instant `ts` already happened earlier: `ts` is in the second
 * pass of a repeated hour (fall back). A repeat lasts as long as the offset change (at most 2 hours
 * in tzdata), so the offset 3 hours before is the one before the change.
 */
export function isSecondPass(zone: string, ts: number): boolean {
  const z = offsets(zone);
  const now = z.offsetMs(ts);
  const before = z.offsetMs(ts - 3 * HOUR_MS);
  if (before <= now) return false;
  // The first pass of the same reading, if it exists, is `before - now` earlier, under `before`.
  return z.offsetMs(ts - (before - now)) === before;
}

export type LocalKind = 'exact' | 'ambiguous' | 'gap';

export interface ResolvedLocal {
  /** The instant the local time maps to under the library's rule (see header). */
  at: number;
  kind: LocalKind;
  /** For `ambiguous`: the second (later) instant with the same wall-clock reading. */
  laterAt?: number;
}

/**
 * Map a naive local time to an instant. Offsets are looked up one day before and after (as the
 * Temporal proposal does), which is exact as long as a zone does not change offset twice in a day.
 */
export function resolveLocal(zone: string, naive: number): ResolvedLocal {
  const z = offsets(zone);
  const oBefore = z.offsetMs(naive - DAY_MS);
  const oAfter = z.offsetMs(naive + DAY_MS);
  if (oBefore === oAfter) {
    const u = naive - oBefore;
    if (z.offsetMs(u) === oBefore) return { at: u, kind: 'exact' };
  }
  const uBefore = naive - oBefore;
  const uAfter = naive - oAfter;
  const okBefore = z.offsetMs(uBefore) === oBefore;
  const okAfter = z.offsetMs(uAfter) === oAfter;
  if (okBefore && okAfter && uBefore !== uAfter) {
    return { at: Math.min(uBefore, uAfter), kind: 'ambiguous', laterAt: Math.max(uBefore, uAfter) };
  }
  if (okBefore) return { at: uBefore, kind: 'exact' };
  if (okAfter) return { at: uAfter, kind: 'exact' };
  // Gap: the instant is in (naive - oAfter, naive - oBefore]; find the transition (first instant
  // with the later offset), which is the first valid local time after the gap.
  let lo = Math.floor(Math.min(uBefore, uAfter) / 1000);
  let hi = Math.ceil(Math.max(uBefore, uAfter) / 1000);
  const first = z.offsetMs(lo * 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (z.offsetMs(mid * 1000) === first) lo = mid;
    else hi = mid;
  }
  return { at: hi * 1000, kind: 'gap' };
}
