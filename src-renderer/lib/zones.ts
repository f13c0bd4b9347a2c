/**
 * IANA time-zone helpers for the jobs views, on `Intl` only (no date library in the renderer).
 * Pure: every function takes the instant it works on. Local times are `YYYY-MM-DDTHH:MM`.
 */

const partsCache = new Map<string, Intl.DateTimeFormat>();

function fmt(zone: string): Intl.DateTimeFormat {
  let f = partsCache.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    });
    partsCache.set(zone, f);
  }
  return f;
}

export interface ZoneParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Mon, Tue, … */
  weekday: string;
}

export function isValidZone(zone: string): boolean {
  if (!zone) return false;
  try {
    fmt(zone);
    return true;
  } catch {
    return false;
  }
}

/** Wall-clock fields of an instant in `zone`. */
export function zoneParts(ms: number, zone: string): ZoneParts {
  const out: Record<string, string> = {};
  for (const p of fmt(zone).formatToParts(new Date(ms))) out[p.type] = p.value;
  return {
    year: Number(out.year),
    month: Number(out.month),
    day: Number(out.day),
    hour: Number(out.hour) % 24,
    minute: Number(out.minute),
    second: Number(out.second),
    weekday: out.weekday ?? '',
  };
}

const p2 = (n: number) => String(n).padStart(2, '0');

/** `YYYY-MM-DDTHH:MM` of an instant in `zone`. */
export function localInZone(ms: number, zone: string): string {
  const z = zoneParts(ms, zone);
  return `${z.year}-${p2(z.month)}-${p2(z.day)}T${p2(z.hour)}:${p2(z.minute)}`;
}

/** `YYYY-MM-DD` of an instant in `zone`. */
export function dateInZone(ms: number, zone: string): string {
  return localInZone(ms, zone).slice(0, 10);
}

/** Offset of `zone` from UTC at an instant, in ms (east positive). */
export function zoneOffsetMs(ms: number, zone: string): number {
  const z = zoneParts(ms, zone);
  const asUtc = Date.UTC(z.year, z.month - 1, z.day, z.hour, z.minute, z.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

/** "UTC+08:00" / "UTC−05:00" at an instant. */
export function offsetLabel(ms: number, zone: string): string {
  const off = Math.round(zoneOffsetMs(ms, zone) / 60_000);
  const sign = off < 0 ? '−' : '+';
  const a = Math.abs(off);
  return `UTC${sign}${p2(Math.floor(a / 60))}:${p2(a % 60)}`;
}

/**
 * The instant of a wall-clock time in `zone`. A time that does not exist (spring-forward gap) is
 * shifted forward by the gap, like the scheduler's `shift_forward`; a time that occurs twice
 * (fall-back) is the earlier one. Null for malformed input.
 */
export function zonedWallToUtc(local: string, zone: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local);
  if (!m || !isValidZone(zone)) return null;
  const naive = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? 0));
  if (!Number.isFinite(naive)) return null;
  // Candidates from the offsets a few hours around the time; keep those that map back exactly.
  const offsets = new Set([zoneOffsetMs(naive - 12 * 3600_000, zone), zoneOffsetMs(naive, zone), zoneOffsetMs(naive + 12 * 3600_000, zone)]);
  const exact = [...offsets].map((o) => naive - o).filter((t) => {
    const z = zoneParts(t, zone);
    return Date.UTC(z.year, z.month - 1, z.day, z.hour, z.minute, z.second) === naive;
  });
  if (exact.length) return Math.min(...exact);
  // In a gap: use the offset from before the gap (the result lands after it).
  return naive - zoneOffsetMs(naive - 12 * 3600_000, zone);
}

/** "Mon 30 Nov 09:00" in `zone` (the year when it is not the year of `now`). */
export function formatInZone(at: string | number, zone: string, now = Date.now()): string {
  const ms = typeof at === 'number' ? at : Date.parse(at);
  if (!Number.isFinite(ms)) return '—';
  const z = zoneParts(ms, zone);
  const month = new Date(Date.UTC(2000, z.month - 1, 1)).toLocaleString('en-US', { month: 'short', timeZone: 'UTC' });
  const year = zoneParts(now, zone).year !== z.year ? ` ${z.year}` : '';
  return `${z.weekday} ${z.day} ${month}${year} ${p2(z.hour)}:${p2(z.minute)}`;
}

/** The operator's own zone (the machine running the console). */
export function operatorZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

const FALLBACK_ZONES = ['UTC', 'Europe/London', 'Europe/Berlin', 'Europe/Paris', 'America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Asia/Shanghai', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Sydney'];
let zonesCache: string[] | null = null;

/** Every IANA zone the engine knows (plus UTC), sorted. */
export function allTimeZones(): string[] {
  if (zonesCache) return zonesCache;
  let list: string[];
  try {
    list = (Intl as unknown as { supportedValuesOf?: (k: string) => string[] }).supportedValuesOf?.('timeZone') ?? [];
  } catch {
    list = [];
  }
  if (list.length === 0) list = FALLBACK_ZONES;
  zonesCache = [...new Set(['UTC', ...list])].sort();
  return zonesCache;
}

/**
 * Zones matching a query, best first: exact, then prefix of a segment ("berl" → Europe/Berlin),
 * then substring; spaces match underscores ("new york").
 */
export function searchZones(query: string, zones: readonly string[] = allTimeZones(), limit = 50): string[] {
  const q = query.trim().toLowerCase().replace(/\s+/g, '_');
  if (!q) return zones.slice(0, limit);
  const scored: Array<[number, string]> = [];
  for (const z of zones) {
    const l = z.toLowerCase();
    let score = -1;
    if (l === q) score = 0;
    else if (l.split('/').some((seg) => seg.startsWith(q))) score = 1;
    else if (l.startsWith(q)) score = 2;
    else if (l.includes(q)) score = 3;
    if (score >= 0) scored.push([score, z]);
  }
  return scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : 1)).slice(0, limit).map(([, z]) => z);
}
