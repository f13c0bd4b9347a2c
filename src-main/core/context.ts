/** What every core service is built from. Assembled once by `createCore`. */
import type { Clock } from '../common/clock';
import type { SchedulerConfig } from '../common/config';
import type { AuditLog } from './audit/audit-store';
import type { Db } from './db/open';
import type { Store } from './db/store';
import type { EventBus } from './events';
import type { GapDetector } from './time/gap-detector';

export interface CoreContext {
  db: Db;
  store: Store;
  audit: AuditLog;
  /** The gap detector's `wakeups` clock: its timers apply a pending gap first and decide after pending input. */
  clock: Clock;
  config: SchedulerConfig;
  events: EventBus;
  /** Stalls, sleeps and clock steps: participants shift their deadlines here (core/time/gap-detector.ts). */
  gaps: GapDetector;
}
