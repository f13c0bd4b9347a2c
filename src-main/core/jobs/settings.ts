/**
 * The owner of the `settings` row `jobs.settings` (the kill switch, the global quota and the loop
 * breaker's count, which tasks read too). Nothing
 * else in Gaffer reads or writes that row: the console and the HTTP API go through `core.jobs`.
 *
 * Invariants:
 * 1. Every change is audited in the caller's transaction (`operator.kill_switch`, `jobs.settings`)
 *    and announced with a `jobs.settings` event after the commit.
 * 2. A change keeps the other setting as it was.
 */
import { isoTime } from '../../common/iso-time';
import { DEFAULT_SAME_ERROR_TIMES, type JobSettings } from '../../common/job-schema';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';

const KEY = 'jobs.settings';

export class JobSettingsStore {
  private readonly row: SettingsRow<JobSettings>;

  constructor(private readonly ctx: CoreContext) {
    this.row = settingsRow(ctx.db, KEY);
  }

  read(): JobSettings {
    const stored = this.row.read() ?? {};
    return {
      killSwitch: stored.killSwitch ?? { on: false, reason: null, by: null, at: null },
      globalConcurrency: stored.globalConcurrency ?? null,
      loopBreaker: { sameErrorTimes: stored.loopBreaker?.sameErrorTimes ?? DEFAULT_SAME_ERROR_TIMES },
    };
  }

  /** Turns the kill switch on or off (audited as `operator.kill_switch`). Inside `store.write`. */
  setKillSwitch(on: boolean, reason: string, actor: string): JobSettings {
    const s = this.read();
    const next: JobSettings = { ...s, killSwitch: { on, reason, by: actor, at: isoTime(this.ctx.clock.now()) } };
    this.row.write(next);
    this.ctx.audit.append({ type: 'operator.kill_switch', actor, subject: 'settings:killSwitch', detail: { reason, from: s.killSwitch.on, to: on } });
    this.ctx.store.emit({ type: 'jobs.settings', settings: next, actor });
    return next;
  }

  /** Most job runs in flight at once across all jobs (`null`: no limit). Inside `store.write`. */
  setGlobalConcurrency(limit: number | null, reason: string, actor: string): JobSettings {
    const s = this.read();
    const next: JobSettings = { ...s, globalConcurrency: limit };
    this.row.write(next);
    this.ctx.audit.append({ type: 'jobs.settings', actor, subject: 'settings:jobs', detail: { reason, globalConcurrency: { from: s.globalConcurrency, to: limit } } });
    this.ctx.store.emit({ type: 'jobs.settings', settings: next, actor });
    return next;
  }

  /** The loop breaker's count for tasks and job runs (0: off). Inside `store.write`. */
  setLoopBreaker(sameErrorTimes: number, reason: string, actor: string): JobSettings {
    const s = this.read();
    const next: JobSettings = { ...s, loopBreaker: { sameErrorTimes } };
    this.row.write(next);
    this.ctx.audit.append({ type: 'jobs.settings', actor, subject: 'settings:jobs', detail: { reason, sameErrorTimes: { from: s.loopBreaker.sameErrorTimes, to: sameErrorTimes } } });
    this.ctx.store.emit({ type: 'jobs.settings', settings: next, actor });
    return next;
  }
}
