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
  /** How typed words were read ("operator" → any operator), to show under the filter. */
  notes: string[];
}

/** Actors that come in families: `operator` means every `operator:…` (desktop, browser, http). */
const ACTOR_FAMILIES = new Set(['operator']);

/**
 * The actor as the operator typed it → the `actor` filter: a family word or `x:` is a prefix
 * (`operator:*`), a name `alias` knows (an instance's name) is its id, anything else as typed.
 */
export function actorFilter(typed: string, alias?: (name: string) => string | null): { actor: string; note: string | null } | null {
  const t = typed.trim().slice(0, 200);
  if (!t) return null;
  if (t.endsWith('*')) return { actor: t, note: null };
  if (t.endsWith(':')) return { actor: `${t}*`, note: `actor: anything starting with “${t}”` };
  if (ACTOR_FAMILIES.has(t.toLowerCase())) return { actor: `${t.toLowerCase()}:*`, note: `actor “${t}”: every ${t.toLowerCase()}:… (desktop, browser, http)` };
  const id = alias?.(t) ?? null;
  if (id && id !== t) return { actor: id, note: `actor “${t}” is instance ${id}` };
  return { actor: t, note: null };
}

/** A typed type → the filter value: `lock` or `lock.` or `lock.*` is every `lock.…` type. */
export function typeFilter(typed: string): string {
  if (typed.endsWith('*')) return typed;
  if (typed.endsWith('.')) return `${typed}*`;
  return typed.includes('.') ? typed : `${typed}.*`;
}

/**
 * Maps the filter form to `audit.query` arguments (without paging). Several types may be given
 * separated by commas or spaces. A bad field leaves it out and reports the problem.
 */
export function formToQuery(form: AuditFilterForm, actorAlias?: (name: string) => string | null): MappedQuery {
  const q: AuditQueryArgs = {};
  let error: string | null = null;
  const notes: string[] = [];
  const types = form.type
    .split(/[\s,]+/)
    .map((t) => t.trim())
    .filter(Boolean)
    .map(typeFilter);
  const uniq = [...new Set(types)].slice(0, 20);
  if (uniq.length === 1) q.type = uniq[0]!;
  else if (uniq.length > 1) q.types = uniq;
  for (const t of uniq) if (t.endsWith('*')) notes.push(`type: every ${t.slice(0, -1)}… type`);
  const actor = actorFilter(form.actor, actorAlias);
  if (actor) {
    q.actor = actor.actor;
    if (actor.note) notes.push(actor.note);
  }
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
  return { query: q, error, notes };
}

const FORM_KEYS = ['type', 'actor', 'subject', 'from', 'to', 'text'] as const;

/** The filter as the URL carries it (`#/audit?actor=operator&type=lock.*`): the typed words, non-empty ones only. */
export function formToRouteQuery(form: AuditFilterForm): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of FORM_KEYS) if (form[k].trim()) out[k] = form[k].trim();
  return out;
}

/** The filter form a URL asks for; fields it does not name are empty (nothing carries over). */
export function formFromRouteQuery(q: Record<string, string>): AuditFilterForm {
  const f = { ...EMPTY_AUDIT_FORM };
  for (const k of FORM_KEYS) if (q[k] !== undefined) f[k] = q[k];
  return f;
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
