/**
 * Pure formatters shared by every view. No React, no clock of their own: callers pass `now`
 * (epoch ms) so tests and the ticking clock agree.
 */

const nf = new Intl.NumberFormat('en-US');

export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  return nf.format(n);
}

/** 1234 → "1.2k", 1_500_000 → "1.5M" (for chart axes and tight spaces). */
export function formatCompact(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e9) return `${trim(n / 1e9)}B`;
  if (a >= 1e6) return `${trim(n / 1e6)}M`;
  if (a >= 1e4) return `${Math.round(n / 1e3)}k`;
  if (a >= 1e3) return `${trim(n / 1e3)}k`;
  return String(n);
}

function trim(x: number): string {
  return x.toFixed(1).replace(/\.0$/, '');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${trim(n / 1024)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${trim(n / (1024 * 1024))} MiB`;
  return `${trim(n / (1024 * 1024 * 1024))} GiB`;
}

/**
 * A duration in seconds for humans: "45 s", "3 min", "2 h 5 min", "3 d 4 h".
 * Whole units only; below a minute it keeps seconds.
 */
export function formatDurationS(totalS: number): string {
  const s = Math.max(0, Math.round(totalS));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) {
    const rs = s % 60;
    return rs && m < 10 ? `${m} min ${rs} s` : `${m} min`;
  }
  const h = Math.floor(m / 60);
  if (h < 48) {
    const rm = m % 60;
    return rm ? `${h} h ${rm} min` : `${h} h`;
  }
  const d = Math.floor(h / 24);
  const rh = h % 24;
  return rh ? `${d} d ${rh} h` : `${d} d`;
}

export function parseInstant(v: string | number | null | undefined): number | null {
  if (v === null || v === undefined) return null;
  const t = typeof v === 'number' ? v : Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/** "just now", "12 s ago", "5 min ago", "3 h ago", "2 d ago"; future instants: "in 5 min". */
export function formatRelative(at: string | number | null | undefined, now: number): string {
  const t = parseInstant(at);
  if (t === null) return '—';
  const diffS = (now - t) / 1000;
  if (Math.abs(diffS) < 2) return 'just now';
  const text = formatDurationS(Math.abs(diffS)).replace(/ (\d+) s$/, '');
  return diffS >= 0 ? `${text} ago` : `in ${text}`;
}

export type CountdownUrgency = 'ok' | 'soon' | 'critical' | 'expired';

export interface Countdown {
  text: string;
  remainingMs: number;
  urgency: CountdownUrgency;
}

/**
 * Time left on a lock. `windowS` is the lock window (P4): under a quarter of it left is "soon",
 * under a tenth (or 30 s) is "critical"; past the expiry it reads "expired 4 s ago" until the
 * watchdog sweeps it.
 */
export function countdown(expiresAt: string | number, now: number, windowS?: number): Countdown {
  const t = parseInstant(expiresAt) ?? now;
  const remainingMs = t - now;
  if (remainingMs <= 0) {
    const over = -remainingMs / 1000;
    return { text: over < 1 ? 'expiring' : `expired ${formatClock(over)} ago`, remainingMs, urgency: 'expired' };
  }
  const s = remainingMs / 1000;
  const w = windowS && windowS > 0 ? windowS : 7200;
  const urgency: CountdownUrgency = s <= Math.max(w * 0.1, Math.min(30, w * 0.5)) ? 'critical' : s <= w * 0.25 ? 'soon' : 'ok';
  return { text: formatClock(s), remainingMs, urgency };
}

/** 75 → "1:15", 3725 → "1:02:05" (a ticking clock; seconds are floored except the last). */
export function formatClock(totalS: number): string {
  const s = Math.max(0, Math.ceil(totalS));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  const mm = h ? String(m).padStart(2, '0') : String(m);
  return `${h ? `${h}:` : ''}${mm}:${String(sec).padStart(2, '0')}`;
}

/** Local date-time, compact: "Nov 30 09:14:03" (this year) or "2025-11-30 09:14". */
export function formatDateTime(at: string | number | null | undefined, now = Date.now()): string {
  const t = parseInstant(at);
  if (t === null) return '—';
  const d = new Date(t);
  const p = (n: number) => String(n).padStart(2, '0');
  const time = `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
  if (d.getFullYear() === new Date(now).getFullYear()) {
    return `${d.toLocaleString('en-US', { month: 'short' })} ${d.getDate()} ${time}`;
  }
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${time}`;
}

/** "2026-11-30" → "Mon 30". */
export function formatDayLabel(day: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return day;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return `${d.toLocaleString('en-US', { weekday: 'short' })} ${d.getDate()}`;
}

export function shortHash(h: string | null | undefined, n = 10): string {
  if (!h) return '—';
  return h.length > n ? `${h.slice(0, n)}…` : h;
}

/** JSON for the detail pane, bounded so a huge detail never freezes the pane. */
export function prettyJson(v: unknown, maxChars = 200_000): string {
  let s: string;
  try {
    s = JSON.stringify(v, null, 2) ?? 'undefined';
  } catch {
    s = String(v);
  }
  return s.length > maxChars ? `${s.slice(0, maxChars)}\n… (${formatCount(s.length - maxChars)} more characters)` : s;
}

/** One-line summary of an audit detail for the list row. */
export function summariseDetail(v: unknown, max = 140): string {
  if (v === null || v === undefined) return '';
  if (typeof v !== 'object') return String(v).slice(0, max);
  const parts: string[] = [];
  for (const [k, val] of Object.entries(v as Record<string, unknown>)) {
    const text = val !== null && typeof val === 'object' ? JSON.stringify(val) : String(val);
    parts.push(`${k}=${text.length > 40 ? `${text.slice(0, 40)}…` : text}`);
    if (parts.join(' ').length > max) break;
  }
  const s = parts.join(' ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** JSON with object keys sorted: the same value, key order aside, gives the same text. */
export function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : x,
  );
}
