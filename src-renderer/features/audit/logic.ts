/** Pure logic of the audit browser: which fields debounce, export progress, clickable subjects. */
import type { AuditFilterForm } from '../../lib/audit-query';

/** Text fields are debounced; choosing from a list or a date applies at once. */
export const DEBOUNCED_FIELDS: ReadonlyArray<keyof AuditFilterForm> = ['type', 'actor', 'subject', 'text'];

/** Export progress as a fraction, or null when the total is unknown. */
export function exportFraction(rows: number, total: number | null, done: boolean): number | null {
  if (done) return 1;
  if (total === null || total <= 0) return null;
  return Math.min(0.99, rows / total);
}

/** Reads the audit subject of an event into something clickable: a task id or an instance id. */
export function subjectLink(subject: string): { kind: 'task' | 'instance' | 'token' | 'other'; id: string } {
  const m = /^(task|instance|token):(.+)$/.exec(subject);
  if (!m) return { kind: 'other', id: subject };
  return { kind: m[1] as 'task' | 'instance' | 'token', id: m[2]! };
}
