/**
 * Pure logic of the Signals view: which jobs wait on which signal (and for which key), the list
 * as filtered by what the operator types, and the set-signal form.
 */
import type { JobSummary } from '../../../src-main/common/job-schema';
import type { Signal } from '../../../src-main/common/model';
import { signalKey, signalName } from '../../../src-main/common/schemas';
import { parseJsonText } from '../../lib/json-text';

export interface SignalWaiter {
  jobId: string;
  job: string;
  /** The key the job asks for: a placeholder such as `{date}` (the slot's business date) or a fixed key. */
  key: string;
}

/** Signal name → the jobs with a precondition on it. */
export function signalWaiters(jobs: readonly JobSummary[]): Map<string, SignalWaiter[]> {
  const out = new Map<string, SignalWaiter[]>();
  for (const j of jobs) {
    for (const p of j.preconditions) {
      if (p.kind !== 'signal') continue;
      const list = out.get(p.name) ?? [];
      list.push({ jobId: j.id, job: j.name, key: p.key ?? '{date}' });
      out.set(p.name, list);
    }
  }
  return out;
}

/** Signals whose name, key, setter or value contain `text` (case-insensitive), newest key first within a name. */
export function filterSignals(items: readonly Signal[], text: string): Signal[] {
  const t = text.trim().toLowerCase();
  const hit = (s: Signal) => !t || `${s.name} ${s.key} ${s.actor} ${s.value === undefined ? '' : JSON.stringify(s.value)}`.toLowerCase().includes(t);
  return items.filter(hit).sort((a, b) => (a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
}

export interface SetSignalForm {
  name: string;
  key: string;
  value: string;
}

export type SetSignalErrors = Partial<Record<keyof SetSignalForm, string>>;

/** The form checked at the field, in the words the form uses (the server checks again). */
export function validateSetSignal(f: SetSignalForm): { ok: true; value: { name: string; key: string; value?: unknown } } | { ok: false; errors: SetSignalErrors } {
  const errors: SetSignalErrors = {};
  const name = f.name.trim();
  if (!name) errors.name = 'Which signal? For example data-ready.';
  else if (!signalName.safeParse(name).success) errors.name = 'Letters, digits, "_", "-", "." or ":" (up to 128), starting with a letter or digit.';
  const key = f.key.trim();
  if (!key) errors.key = 'For which business key? Usually a date such as 2026-12-01.';
  else if (!signalKey.safeParse(key).success) errors.key = 'At most 200 characters, and no control characters.';
  const parsed = parseJsonText(f.value);
  const value = parsed.ok ? parsed.value : undefined;
  if (!parsed.ok) errors.value = parsed.error;
  if (Object.keys(errors).length) return { ok: false, errors };
  return { ok: true, value: { name, key, ...(value === undefined ? {} : { value }) } };
}

/** Today's date on the operator's calendar, the usual business key. */
export function todayKey(now: number): string {
  const d = new Date(now);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}
