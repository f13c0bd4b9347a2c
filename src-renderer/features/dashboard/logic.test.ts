import { describe, expect, it } from 'vitest';
import type { RoleSummary } from '../../../src-main/common/console-api';
import type { ManagedAgent, ManagedProcess } from '../../../src-main/common/managed-agents';
import { crashLooping, distributionRows, queueHealth, throughputRows, worstStuck } from './logic';

const role = (p: Partial<RoleSummary> & { role: string }): RoleSummary => ({ ready: 0, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: 1, oldestReadyAgeMs: null, ...p });

describe('dashboard logic', () => {
  it('highlights the stuck queue: ready work nobody takes; a busy but long queue is only slow', () => {
    const h = queueHealth([
      role({ role: 'pm', ready: 2, oldestReadyAgeMs: 5000 }),
      role({ role: 'dev', ready: 4, oldestReadyAgeMs: 600_000 }),
      role({ role: 'reviewer', ready: 1, onlineInstances: 0, oldestReadyAgeMs: 70_000 }),
      role({ role: 'ops', ready: 900, inProgress: 10, onlineInstances: 10, oldestReadyAgeMs: 3_600_000 }),
    ]);
    expect(h.map((r) => r.role)).toEqual(['dev', 'reviewer', 'ops', 'pm']);
    expect(h[0]!.stuck).toBe('nothing in progress, oldest ready task waiting 10 min');
    expect(h[1]!.stuck).toBe('1 ready, no reviewer instance online');
    expect(h[2]).toMatchObject({ stuck: null, slow: 'backlogged: oldest ready task waiting 1 h' });
    expect(h[3]!.stuck).toBeNull();
    expect(h[3]!.slow).toBeNull();
    expect(worstStuck(h)?.role).toBe('dev');
    expect(distributionRows(h)[0]).toEqual({ queue: 'dev', ready: 4, waiting: 0, inProgress: 0, blocked: 0, stuck: true });
  });

  it('fills the last seven days, oldest first', () => {
    const rows = throughputRows([{ day: '2026-11-30', done: 5, failed: 1, expired: 2 }, { day: '2026-11-25', done: 1, failed: 0, expired: 0 }], '2026-11-30');
    expect(rows.map((r) => r.day)).toEqual(['2026-11-24', '2026-11-25', '2026-11-26', '2026-11-27', '2026-11-28', '2026-11-29', '2026-11-30']);
    expect(rows[6]).toMatchObject({ done: 5, failed: 1, expired: 2, label: 'Mon 30' });
    expect(rows[0]).toMatchObject({ done: 0 });
  });
});

describe('crash-looping managed agents', () => {
  const proc = (instance: number, status: ManagedProcess['status'], exit?: string): ManagedProcess =>
    ({ instance, status, pid: null, startedAt: null, restarts: 5, lastExit: exit ? { code: 1, signal: null, at: `2026-12-05T10:0${instance}:00.000Z`, description: exit } : null, instanceId: null, nextStartAt: null, message: 'crash looping', version: 1 }) as ManagedProcess;
  const agent = (name: string, p: Partial<ManagedAgent>): Pick<ManagedAgent, 'name' | 'desired' | 'supervised' | 'processes'> => ({ name, desired: 'running', supervised: true, processes: [], ...p });

  it('an agent Gaffer keeps running with a process in a crash loop is called out, with its newest exit', () => {
    expect(
      crashLooping([
        agent('ok', { processes: [proc(1, 'running')] }),
        agent('claude-dev', { processes: [proc(1, 'crash_looping', 'exit 1 after 1 s'), proc(2, 'running'), proc(3, 'crash_looping', 'exit 2 after 0 s')] }),
        agent('codex', { processes: [proc(1, 'crash_looping')] }),
      ]),
    ).toEqual([
      { name: 'claude-dev', instances: '2 of 3 instances', lastExit: 'exit 2 after 0 s' },
      { name: 'codex', instances: '', lastExit: 'crash looping' },
    ]);
  });

  it('not an agent the operator stopped, nor one this Gaffer does not run', () => {
    expect(crashLooping([agent('a', { desired: 'stopped', processes: [proc(1, 'crash_looping')] }), agent('b', { supervised: false, processes: [proc(1, 'crash_looping')] })])).toEqual([]);
  });
});
