/** The audit filter as the operator types it, mapped to `audit.query` arguments. */
import type { ConsoleArgs } from '../../src-main/common/console-api';

export type AuditQueryArgs = ConsoleArgs<'audit.query'>;

/** The audit filter as typed in the form (strings), before mapping to a query. */
export interface AuditFilterForm {
  type: string;
  actor: string;
  subject: string;
  /** `datetime-local` values (local time) or ''. */
  from: string;
  to: string;
  text: string;
}

export const EMPTY_AUDIT_FORM: AuditFilterForm = { type: '', actor: '', subject: '', from: '', to: '', text: '' };

/** `datetime-local` ("2026-11-30T09:00" or with seconds) in local time → ISO UTC; '' → undefined. */
export function localInputToIso(v: string): string | undefined | null {
  const s = v.trim();
  if (!s) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(s);
  if (!m) return null;
  const d = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0));
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

export function isoToLocalInput(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

export interface MappedQuery {
  query: AuditQueryArgs;
  error: string | null;
}

/**
 * Maps the filter form to `audit.query` arguments (without paging). Several types may be given
 * separated by commas or spaces. A bad field leaves it out and reports the problem.
 */
export function formToQuery(form: AuditFilterForm): MappedQuery {
  const q: AuditQueryArgs = {};
  let error: string | null = null;
  const types = form.type
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean);
  const uniq = [...new Set(types)].slice(0, 20);
  if (uniq.length === 1) q.type = uniq[0]!;
  else if (uniq.length > 1) q.types = uniq;
  const actor = form.actor.trim();
  if (actor) q.actor = actor.slice(0, 200);
  const subject = normaliseSubject(form.subject);
  if (subject) q.subject = subject;
  const from = localInputToIso(form.from);
  const to = localInputToIso(form.to);
  if (from === null) error = 'the "from" time is not a date';
  else if (from) q.from = from;
  if (to === null) error = 'the "to" time is not a date';
  else if (to) q.to = to;
  if (from && to && Date.parse(from) >= Date.parse(to)) {
    error = '"from" must be before "to"';
    delete q.from;
    delete q.to;
  }
  const text = form.text.trim();
  if (text) q.text = text.slice(0, 200);
  return { query: q, error };
}

/** "42" or "#42" means task 42; anything else is taken as typed ("instance:abc"). */
export function normaliseSubject(s: string): string {
  const t = s.trim();
  if (!t) return '';
  const m = /^#?(\d+)$/.exec(t);
  return m ? `task:${m[1]}` : t.slice(0, 200);
}

export function isFiltered(q: AuditQueryArgs): boolean {
  return Boolean(q.type || q.types?.length || q.actor || q.subject || q.from !== undefined || q.to !== undefined || q.text);
}

/** Fields that change what matches (a form edit that changes none of these does not reload). */
export function sameQuery(a: AuditQueryArgs, b: AuditQueryArgs): boolean {
  return JSON.stringify(normaliseForCompare(a)) === JSON.stringify(normaliseForCompare(b));
}

function normaliseForCompare(q: AuditQueryArgs) {
  return [q.type ?? null, q.types ?? null, q.actor ?? null, q.subject ?? null, q.from ?? null, q.to ?? null, q.text ?? null];
}
