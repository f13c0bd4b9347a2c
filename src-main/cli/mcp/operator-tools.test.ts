/** The operator tools reach Gaffer only through the GET routes of catalogue operations (read-only). */
import { describe, expect, it } from 'vitest';
import { OPS } from '../../common/ops';
import { OPERATOR_TOOL_OPS, opPath } from './operator-tools';

describe('operator tools over the ops catalogue', () => {
  it('each tool operation is one the operator may call, through a GET route', () => {
    for (const name of OPERATOR_TOOL_OPS) {
      expect(OPS[name].callers, name).toContain('operator');
      expect((OPS[name].rest ?? []).some((r) => r.method === 'GET'), name).toBe(true);
    }
  });

  it('paths come from the catalogue, with parameters encoded', () => {
    expect(opPath('status.get')).toBe('/status');
    expect(opPath('jobs.explain', { id: 'daily report/1' })).toBe('/jobs/daily%20report%2F1/explain');
    expect(opPath('runs.get', { id: 'run_1' })).toBe('/runs/run_1');
    expect(() => opPath('runs.get')).toThrow(/no value for :id/);
    // An operation without a GET route is refused: a tool cannot reach a write.
    expect(() => opPath('signals.set' as never)).toThrow(/no GET route/);
  });
});
