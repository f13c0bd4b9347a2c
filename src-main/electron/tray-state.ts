/**
 * What the tray shows (online / stuck / needs attention), computed from the dashboard.
 * Pure: unit-tested without Electron.
 *
 * - online: connected agent instances.
 * - stuck: roles whose ready queue is not moving — ready tasks and no instance online, or the
 *   oldest ready task has waited longer than the recovery bound (SPEC §2).
 * - needs attention: runs needing attention (jobs) + blocked + failed tasks (each waits on the
 *   operator: unblock, retry or cancel).
 */
import type { Dashboard } from '../common/console-api';

export interface TrayCounts {
  online: number;
  stuck: number;
  attention: number;
  killSwitch: boolean;
  stuckRoles: string[];
}

export function trayCounts(d: Dashboard): TrayCounts {
  const boundMs = d.recoveryBoundS * 1000;
  const stuckRoles = d.roles
    .filter((r) => r.ready > 0 && (r.onlineInstances === 0 || (r.oldestReadyAgeMs ?? 0) > boundMs))
    .map((r) => r.role);
  const attention = d.runsNeedingAttention + d.roles.reduce((n, r) => n + r.blocked + r.failed, 0);
  return { online: d.onlineInstances, stuck: stuckRoles.length, attention, killSwitch: d.killSwitch, stuckRoles };
}

export function trayTooltip(c: TrayCounts): string {
  const parts = [`${c.online} online`, `${c.stuck} stuck`, `${c.attention} need attention`];
  const head = c.killSwitch ? 'Gaffer — KILL SWITCH ON' : 'Gaffer';
  return `${head}\n${parts.join(' · ')}${c.stuckRoles.length ? `\nstuck: ${c.stuckRoles.slice(0, 5).join(', ')}` : ''}`;
}

/** Short text for macOS's menu-bar title. */
export function trayTitle(c: TrayCounts): string {
  return `${c.online}·${c.stuck}·${c.attention}`;
}
