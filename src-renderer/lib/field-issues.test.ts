import { describe, expect, it } from 'vitest';
import { dedupeIssues, issuesAt, issuesFromError } from './field-issues';

describe('field issues', () => {
  it('reads server issues from an error detail (core and console boundary shapes)', () => {
    expect(issuesFromError({ issues: [{ field: 'toleranceS', message: 'm', severity: 'error' }] })).toEqual([{ field: 'toleranceS', message: 'm', severity: 'error' }]);
    expect(issuesFromError({ issues: [{ path: 'spec.window.end', message: 'bad' }] })).toEqual([{ field: 'window.end', message: 'bad', severity: 'error' }]);
    expect(issuesFromError(undefined)).toEqual([]);
  });

  it('keeps one of each (field, message) and picks the issues of one field', () => {
    const a = { field: 'name', message: 'required', severity: 'error' } as const;
    const b = { field: 'name.first', message: 'required', severity: 'error' } as const;
    expect(dedupeIssues([a, b, { ...a }])).toEqual([a, b]);
    expect(issuesAt([a, b], 'name')).toEqual([a]);
  });
});
