/**
 * Which inbox changes become OS notifications (pure; unit-tested without Electron).
 *
 * 1. Only a new item (`raised`) or a snoozed one whose time came (`reopened`) notifies: one
 *    notification per item, never one per folded occurrence.
 * 2. Only the kinds the operator chose (`desktop.kinds`), and never inside the quiet hours (the
 *    item waits in the inbox; the tray shows the count).
 * 3. What passes goes through the NotifyGate (rate limit, critical first) as an alert.
 */
import { inQuietHours, type DesktopNotifications } from '../common/attention';
import type { ConsoleEvent } from '../common/console-api';

type Alert = Extract<ConsoleEvent, { type: 'alert' }>;

export function desktopAlerts(events: readonly ConsoleEvent[], desktop: DesktopNotifications, now: number, zone: string): Alert[] {
  if (inQuietHours(desktop.quietHours, now, zone)) return [];
  const kinds = new Set(desktop.kinds);
  const out: Alert[] = [];
  for (const e of events) {
    if (e.type !== 'inbox.changed' || (e.action !== 'raised' && e.action !== 'reopened') || !kinds.has(e.kind)) continue;
    out.push({ type: 'alert', level: e.severity === 'critical' ? 'critical' : 'warning', title: e.action === 'reopened' ? `Again: ${e.title}` : e.title, body: e.detail });
  }
  return out;
}

/** The operator's zone, as the machine says. */
export function machineZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
