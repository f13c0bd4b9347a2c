/**
 * A labelled form field with its issues underneath, shared by the job and calendar editors.
 * Issues render as `[data-testid="field-issue"]` inside the field's `[data-field]` label.
 */
import type { ReactNode } from 'react';
import type { JobIssue } from '../../src-main/common/job-schema';
import { issuesAt } from '../lib/field-issues';

/** Whether `field` has an error (for `aria-invalid`). */
export function hasError(issues: readonly JobIssue[], field: string): boolean {
  return issues.some((i) => i.field === field && i.severity === 'error');
}

/** The given issues, one line each, tagged with `data-issue-field` unless `markField` is false. */
export function FieldIssues({ issues, markField = true }: { issues: readonly JobIssue[]; markField?: boolean }) {
  if (!issues.length) return null;
  return (
    <>
      {issues.map((i) => (
        <span key={i.message} className={i.severity === 'error' ? 'field-error' : 'field-warn'} data-testid="field-issue" data-issue-field={markField ? i.field : undefined}>
          {i.severity === 'warning' ? '⚠ ' : ''}
          {i.message}
        </span>
      ))}
    </>
  );
}

/** A field showing the issues of exactly `field` out of `issues`; `help` when it has none. */
export function Field({ field, label, help, children, issues, markField = true }: { field: string; label: ReactNode; help?: ReactNode; children: ReactNode; issues: readonly JobIssue[]; markField?: boolean }) {
  const mine = issuesAt(issues, field);
  return (
    <label className="field" data-field={field}>
      <span className="field-label">{label}</span>
      {children}
      <FieldIssues issues={mine} markField={markField} />
      {help && !mine.length ? <span className="field-help">{help}</span> : null}
    </label>
  );
}
