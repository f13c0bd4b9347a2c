/** Issues at a form's fields (job and calendar editors): which belong to a field, and the server's. */
import type { JobIssue } from '../../src-main/common/job-schema';

export function dedupeIssues(issues: JobIssue[]): JobIssue[] {
  const seen = new Set<string>();
  return issues.filter((i) => {
    const k = `${i.field}\u0000${i.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Issues of exactly this field. */
export function issuesAt(issues: readonly JobIssue[], field: string): JobIssue[] {
  return issues.filter((i) => i.field === field);
}

/** Issues from the server's error detail (`{issues: [{field|path, message}]}`), if any. */
export function issuesFromError(detail: unknown): JobIssue[] {
  const list = (detail as { issues?: unknown } | null)?.issues;
  if (!Array.isArray(list)) return [];
  return list
    .map((x) => x as { field?: unknown; path?: unknown; message?: unknown; severity?: unknown })
    .filter((x) => typeof x.message === 'string')
    .map((x) => {
      // Errors from the console boundary name the path inside the `spec` argument.
      const raw = typeof x.field === 'string' ? x.field : typeof x.path === 'string' ? x.path : '(body)';
      const field = raw.replace(/^spec\./, '') || '(body)';
      return { field, message: x.message as string, severity: x.severity === 'warning' ? 'warning' : 'error' } as JobIssue;
    });
}
