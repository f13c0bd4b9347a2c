/**
 * Rate limiting for OS notifications: alerts arrive in batches (already merged per batch by the
 * console event hub); the operator should get a few notifications, not a storm.
 *
 * 1. Only `warning` and `critical` alerts notify (`info` stays in the UI).
 * 2. At most one notification per `minIntervalMs` (default 10 s); alerts arriving in between are
 *    held and summarised in the next one ("+4 more").
 * 3. A critical alert is never dropped: it goes out at the next allowed instant, first.
 * Pure: the caller supplies the clock and the timer.
 */
import type { ConsoleEvent } from '../common/console-api';

type Alert = Extract<ConsoleEvent, { type: 'alert' }>;

export interface Note {
  title: string;
  body: string;
  critical: boolean;
}

export interface GateOptions {
  minIntervalMs?: number;
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  show(note: Note): void;
}

export class NotifyGate {
  private held: Alert[] = [];
  private last = -Infinity;
  private timer: unknown;
  private readonly interval: number;

  constructor(private readonly o: GateOptions) {
    this.interval = o.minIntervalMs ?? 10_000;
  }

  push(events: readonly ConsoleEvent[]): void {
    for (const e of events) if (e.type === 'alert' && e.level !== 'info') this.held.push(e);
    this.pump();
  }

  private pump(): void {
    if (this.held.length === 0 || this.timer !== undefined) return;
    const wait = this.last + this.interval - this.o.now();
    if (wait > 0) {
      this.timer = this.o.setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait);
      return;
    }
    const alerts = this.held;
    this.held = [];
    this.last = this.o.now();
    const critical = alerts.filter((a) => a.level === 'critical');
    const first = critical[0] ?? alerts[0]!;
    const more = alerts.length - 1;
    this.o.show({
      title: first.title,
      body: more > 0 ? `${first.body} (+${more} more in Gaffer)` : first.body,
      critical: critical.length > 0,
    });
  }
}
