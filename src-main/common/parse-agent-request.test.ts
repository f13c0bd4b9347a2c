import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseAgentRequest } from './parse-agent-request';
import { agentRequest } from './protocol';

afterEach(() => vi.restoreAllMocks());

const LONE = '\ud800';
const base = { report: { id: 7, type: 'report', taskId: 3, fence: 2, status: 'done' }, renew: { id: 'r-1', type: 'renew', taskId: 3, fence: 2 } };

/** Frames around every edge the direct path decides on; each must come out exactly as the schema says. */
const FRAMES: unknown[] = [
  base.report,
  { ...base.report, claimNext: true },
  { ...base.report, claimNext: false, note: 'ok' },
  { ...base.report, note: '' },
  { ...base.report, note: 'x'.repeat(10_000) },
  { ...base.report, note: 'x'.repeat(10_001) },
  { ...base.report, note: '😀'.repeat(6_000) }, // 12 000 units, 6 000 code points: the schema's call
  { ...base.report, note: `bad ${LONE}` },
  { ...base.report, note: 5 },
  { ...base.report, note: null },
  { ...base.report, claimNext: 'yes' },
  { ...base.report, claimNext: null },
  { ...base.report, status: 'verifying' },
  { ...base.report, status: 'DONE' },
  { ...base.report, status: undefined },
  { ...base.report, taskId: 0 },
  { ...base.report, taskId: -1 },
  { ...base.report, taskId: 1.5 },
  { ...base.report, taskId: 2 ** 53 },
  { ...base.report, taskId: Number.MAX_SAFE_INTEGER },
  { ...base.report, taskId: '3' },
  { ...base.report, fence: 0 },
  { ...base.report, fence: -0 },
  { ...base.report, fence: null },
  { ...base.report, output: { a: 1 } },
  { ...base.report, extra: 1 },
  { ...base.report, [`k${LONE}`]: 1 },
  JSON.parse('{"id":1,"type":"report","taskId":3,"fence":2,"status":"done","__proto__":{"x":1}}'),
  { ...base.report, id: 0 },
  { ...base.report, id: -5 },
  { ...base.report, id: 1.5 },
  { ...base.report, id: 2 ** 53 },
  { ...base.report, id: '' },
  { ...base.report, id: 'a'.repeat(100) },
  { ...base.report, id: 'a'.repeat(101) },
  { ...base.report, id: '😀'.repeat(60) },
  { ...base.report, id: LONE },
  { ...base.report, id: null },
  { ...base.report, id: undefined },
  { ...base.report, id: true },
  base.renew,
  { ...base.renew, taskId: 0 },
  { ...base.renew, fence: 'x' },
  { ...base.renew, note: 'n' },
  { id: 1, type: 'claim' },
  { id: 1, type: 'claim', role: 'dev' },
  { id: 1, type: 'claim', role: 'no good' },
  { id: 1, type: 'heartbeat' },
  { id: 1, type: 'heartbeat', x: 1 },
  { id: 1, type: 'hello', role: 'dev', name: 'a' },
  { id: 1, type: 'constructor' },
  { id: 1, type: '__proto__' },
  { id: 1, type: 'nope' },
  { id: 1 },
  [],
  [1],
  'report',
  null,
  42,
];

describe('parseAgentRequest', () => {
  it('agrees with the schema on every frame: the same verdict, the same fields and values, the same first issue', () => {
    for (const frame of FRAMES) {
      const want = agentRequest.safeParse(frame);
      const got = parseAgentRequest(frame);
      expect({ frame, success: got.success }).toEqual({ frame, success: want.success });
      if (want.success && got.success) {
        expect(got.data).toStrictEqual(want.data);
        expect(Object.keys(got.data).sort()).toEqual(Object.keys(want.data).sort());
      } else expect(got.error?.issues[0]).toEqual(want.error?.issues[0]);
    }
  });

  it('claim, renew, report (no output) and heartbeat frames are validated without the schema', () => {
    const schema = vi.spyOn(agentRequest, 'safeParse');
    for (const frame of [base.report, { ...base.report, claimNext: true, note: 'n' }, base.renew, { id: 1, type: 'claim' }, { id: 'h', type: 'heartbeat' }]) {
      expect(parseAgentRequest(frame).success).toBe(true);
    }
    expect(schema).not.toHaveBeenCalled();
    // Anything else still goes through the schema.
    expect(parseAgentRequest({ ...base.report, output: [1] }).success).toBe(true);
    expect(parseAgentRequest({ ...base.report, taskId: 0 }).success).toBe(false);
    expect(schema).toHaveBeenCalledTimes(2);
  });
});
