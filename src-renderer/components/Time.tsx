import { splitInstants } from '../lib/evidence';
import { countdown, formatDateTime, formatRelative } from '../lib/format';
import { useNow } from '../lib/now';

/** "5 min ago", re-rendered as time passes; the exact time is in the tooltip. */
export function RelativeTime({ at, granularityMs = 1000 }: { at: string | number | null | undefined; granularityMs?: number }) {
  // The hook re-renders at the granularity; each render reads the real time, so an instant
  // newer than the last tick never reads as "in 9 s".
  const now = Math.max(useNow(granularityMs), Date.now());
  if (at === null || at === undefined) return <span className="muted">—</span>;
  return (
    <time className="reltime" dateTime={typeof at === 'string' ? at : new Date(at).toISOString()} title={formatDateTime(at)}>
      {formatRelative(at, now)}
    </time>
  );
}

/** Live countdown to an instant (a lock's expiry by default), coloured as it runs low. */
export function Countdown({ expiresAt, windowS, label = 'the lock expires' }: { expiresAt: string; windowS?: number; label?: string }) {
  const now = useNow(1000);
  const c = countdown(expiresAt, now, windowS);
  return (
    <span className={`countdown cd-${c.urgency}`} title={`${label} ${formatDateTime(expiresAt)}`}>
      {c.text}
    </span>
  );
}

/** An instant in the operator's local time; the ISO UTC form on hover (and as `dateTime`). */
export function LocalTime({ at }: { at: string | number | null | undefined }) {
  if (at === null || at === undefined) return <span className="muted">—</span>;
  const iso = typeof at === 'string' ? at : new Date(at).toISOString();
  return (
    <time className="localtime" dateTime={iso} title={`${iso} (UTC)`}>
      {formatDateTime(at)}
    </time>
  );
}

/** Server text with ISO instants in it (reasons, outcomes): each instant in local time, the ISO text on hover. */
export function TimeText({ text }: { text: string }) {
  return (
    <>
      {splitInstants(text).map((part, i) => (typeof part === 'string' ? part : <LocalTime key={i} at={part.iso} />))}
    </>
  );
}
