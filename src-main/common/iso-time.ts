/**
 * `new Date(ms).toISOString()`, faster for the timestamps a hot path formats over and over.
 *
 * Every claim and report formats a few instants (now, now + lock window, the task's creation) and
 * consecutive calls mostly fall in the same few seconds: the `YYYY-MM-DDTHH:MM:SS.` prefix of the
 * last four seconds seen is kept, and only the milliseconds are appended. Identical output to
 * toISOString for every instant (outside years 0000–9999 it simply calls toISOString).
 */
const LAST_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

interface Prefix {
  second: number;
  text: string;
}

/** A claim formats up to four different seconds: creation, now, now + lock window, and a spare. */
const prefixes: Prefix[] = Array.from({ length: 4 }, () => ({ second: NaN, text: '' }));
let replaceNext = 0;

export function isoTime(ms: number): string {
  if (!(ms >= 0 && ms <= LAST_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const second = Math.floor(ms / 1000);
  let p: Prefix | undefined;
  for (const candidate of prefixes) {
    if (candidate.second === second) {
      p = candidate;
      break;
    }
  }
  if (p === undefined) {
    p = prefixes[replaceNext]!;
    replaceNext = (replaceNext + 1) % prefixes.length;
    p.second = second;
    p.text = new Date(second * 1000).toISOString().slice(0, 20);
  }
  const millis = ms - second * 1000;
  return p.text + (millis < 10 ? '00' : millis < 100 ? '0' : '') + millis + 'Z';
}

/** `isoTime` for a column that may be empty. */
export function isoTimeOrNull(ms: number | null | undefined): string | null {
  return ms === null || ms === undefined ? null : isoTime(ms);
}
