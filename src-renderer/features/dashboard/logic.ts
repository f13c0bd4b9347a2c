/** Pure logic of the dashboard: queue health, chart rows, crash-looping agents and the recovery bound text. */
import type { RoleSummary, ThroughputPoint } from '../../../src-main/common/console-api';
import type { ManagedAgent } from '../../../src-main/common/managed-agents';
import { formatDayLabel, formatDurationS } from '../../lib/format';

export interface RoleHealth extends RoleSummary {
  /** Why this queue looks stuck (nobody is taking its work), or null. */
  stuck: string | null;
  /** Work is being taken, but the oldest ready task has waited long: backlogged, not stuck. */
  slow: string | null;
  /** 0 = worst. */
  rank: number;
}

/**
 * A queue is stuck when claimable work waits and nobody takes it: no instance of the role is
 * online, or instances are online but nothing is in progress while the oldest ready task has
 * waited past `stuckAfterMs`. A queue whose work is being taken but whose oldest ready task has
 * waited past `slowAfterMs` is backlogged ("slow"). Ranked by oldest ready age, stuck first.
 */
export function queueHealth(roles: RoleSummary[], stuckAfterMs = 60_000, slowAfterMs = 10 * 60_000): RoleHealth[] {
  const rows = roles.map((r) => {
    let stuck: string | null = null;
    let slow: string | null = null;
    const age = r.oldestReadyAgeMs;
    const waited = age === null ? '' : formatDurationS(age / 1000);
    if (r.ready > 0 && r.onlineInstances === 0) stuck = `${r.ready} ready, no ${r.role} instance online`;
    else if (r.ready > 0 && r.inProgress === 0 && age !== null && age >= stuckAfterMs) stuck = `nothing in progress, oldest ready task waiting ${waited}`;
    else if (age !== null && age >= slowAfterMs) slow = `backlogged: oldest ready task waiting ${waited}`;
    return { ...r, stuck, slow, rank: 0 };
  });
  rows.sort((a, b) => {
    if (!!a.stuck !== !!b.stuck) return a.stuck ? -1 : 1;
    return (b.oldestReadyAgeMs ?? -1) - (a.oldestReadyAgeMs ?? -1) || a.role.localeCompare(b.role);
  });
  rows.forEach((r, i) => (r.rank = i));
  return rows;
}

/** The worst stuck role (highest oldest-ready age among stuck ones), or null. */
export function worstStuck(rows: RoleHealth[]): RoleHealth | null {
  return rows.find((r) => r.stuck) ?? null;
}

export interface DistributionRow {
  /** The role's name. Not `role`: chart libraries pass row fields on as attributes, and `role` is an ARIA attribute. */
  queue: string;
  ready: number;
  waiting: number;
  inProgress: number;
  blocked: number;
  stuck: boolean;
}

export function distributionRows(health: RoleHealth[], maxRoles = 12): DistributionRow[] {
  return health.slice(0, maxRoles).map((r) => ({ queue: r.role, ready: r.ready, waiting: r.waiting, inProgress: r.inProgress, blocked: r.blocked + r.failed, stuck: !!r.stuck }));
}

export interface ThroughputRow extends ThroughputPoint {
  label: string;
}

/** The last `days` days, oldest first, filling days the server left out with zeros. */
export function throughputRows(points: ThroughputPoint[], today: string, days = 7): ThroughputRow[] {
  const byDay = new Map(points.map((p) => [p.day, p]));
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(today);
  const base = m ? new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : new Date();
  const out: ThroughputRow[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const d = new Date(base.getFullYear(), base.getMonth(), base.getDate() - i);
    const key = localDay(d);
    const p = byDay.get(key) ?? { day: key, done: 0, failed: 0, expired: 0 };
    out.push({ ...p, label: formatDayLabel(key) });
  }
  return out;
}

export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

/** A managed agent the dashboard calls out: its process keeps exiting right after it starts. */
export interface CrashLoop {
  name: string;
  /** "2 of 3 instances"; empty when the agent has one. */
  instances: string;
  /** The last exit, in words ("exit 1 after 2 s"), or why it is in the loop. */
  lastExit: string | null;
}

/**
 * The agents Gaffer keeps running (supervised, not stopped by the operator) with a process in a
 * crash loop — whether or not its inbox item was acknowledged: the dashboard says what is true now.
 */
export function crashLooping(agents: ReadonlyArray<Pick<ManagedAgent, 'name' | 'desired' | 'supervised' | 'processes'>>): CrashLoop[] {
  const out: CrashLoop[] = [];
  for (const a of agents) {
    if (!a.supervised || a.desired !== 'running') continue;
    const looping = a.processes.filter((p) => p.status === 'crash_looping');
    if (looping.length === 0) continue;
    const newest = [...looping].sort((x, y) => (y.lastExit?.at ?? '').localeCompare(x.lastExit?.at ?? ''))[0]!;
    const main = a.processes.filter((p) => p.status !== 'draining').length;
    out.push({ name: a.name, instances: main > 1 ? `${looping.length} of ${main} instances` : '', lastExit: newest.lastExit?.description ?? newest.message });
  }
  return out.sort((x, y) => x.name.localeCompare(y.name));
}
