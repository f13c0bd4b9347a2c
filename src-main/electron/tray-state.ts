/**
 * What the tray shows (online / stuck / open in the inbox), computed from the dashboard.
 * Pure: unit-tested without Electron.
 *
 * - online: connected agent instances.
 * - stuck: roles whose ready queue is not moving — ready tasks and no instance online, or the
 *   oldest ready task has waited longer than the recovery bound (SPEC §2).
 * - inbox: open inbox items (snoozed ones are not counted until they wake), and how many of
 *   them are critical — everything that waits on the operator is an inbox item.
 */
import type { Dashboard } from '../common/console-api';

export interface TrayCounts {
  online: number;
  stuck: number;
  inbox: number;
  critical: number;
  killSwitch: boolean;
  stuckRoles: string[];
}

export function trayCounts(d: Dashboard): TrayCounts {
  const boundMs = d.recoveryBoundS * 1000;
  const stuckRoles = d.roles
    .filter((r) => r.ready > 0 && (r.onlineInstances === 0 || (r.oldestReadyAgeMs ?? 0) > boundMs))
    .map((r) => r.role);
  return { online: d.onlineInstances, stuck: stuckRoles.length, inbox: d.inbox.open, critical: d.inbox.critical, killSwitch: d.killSwitch, stuckRoles };
}

export function trayTooltip(c: TrayCounts): string {
  const parts = [`${c.online} online`, `${c.stuck} stuck`, inboxLine(c)];
  const head = c.killSwitch ? 'Gaffer — KILL SWITCH ON' : 'Gaffer';
  return `${head}\n${parts.join(' · ')}${c.stuckRoles.length ? `\nstuck: ${c.stuckRoles.slice(0, 5).join(', ')}` : ''}`;
}

export function inboxLine(c: TrayCounts): string {
  return `${c.inbox} in the inbox${c.critical > 0 ? ` (${c.critical} critical)` : ''}`;
}

/** Short text for macOS's menu-bar title. */
export function trayTitle(c: TrayCounts): string {
  return `${c.online}·${c.stuck}·${c.inbox}`;
}
