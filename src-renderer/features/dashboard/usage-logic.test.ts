import { describe, expect, it } from 'vitest';
import { costByRoleRows, jobCostRows } from './usage-logic';

const d = (day: string, role: string, costUsd: number, job: string | null = null) => ({ day, role, job, inputTokens: 10, outputTokens: 5, costUsd });

describe('usage charts', () => {
  it('gives every day of the range a row with every role, summing a role over its jobs', () => {
    const { rows, roles } = costByRoleRows([d('2026-11-30', 'dev', 0.5), d('2026-11-30', 'dev', 0.25, 'j1'), d('2026-12-01', 'ops', 1)], '2026-12-01', 3);
    expect(roles).toEqual(['dev', 'ops']);
    expect(rows).toEqual([
      { day: '2026-11-29', label: '11-29', dev: 0, ops: 0 },
      { day: '2026-11-30', label: '11-30', dev: 0.75, ops: 0 },
      { day: '2026-12-01', label: '12-01', dev: 0, ops: 1 },
    ]);
  });
  it('follows one job over the days', () => {
    expect(jobCostRows([d('2026-12-01', 'ops', 2, 'j1'), d('2026-12-01', 'ops', 3, 'j2')], 'j1', '2026-12-01', 2)).toEqual([
      { day: '2026-11-30', label: '11-30', costUsd: 0, tokens: 0 },
      { day: '2026-12-01', label: '12-01', costUsd: 2, tokens: 15 },
    ]);
  });
});
