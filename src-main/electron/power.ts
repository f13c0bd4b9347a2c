/**
 * Sleep and wake (SPEC §9: "a laptop that sleeps for hours wakes up without a storm").
 * On resume the core's gap detector reads the clocks at once instead of at its next pulse, so
 * lock windows, heartbeats and run deadlines are shifted by the sleep before anything else runs
 * (core/time/gap-detector.ts).
 *
 * 1. The gap is measured by the detector (wall clock against monotonic clock), not from the
 *    `suspend` event, so it is the same whoever notices it first.
 * 2. If the detector already applied it (a pulse ran before `resume` arrived), nothing is applied
 *    a second time: the detector records each gap once.
 * 3. Short naps (under the detector's threshold) are ignored: lock windows are minutes to hours long.
 * No electron import: the shell wires `powerMonitor` to `suspend()` / `resume()`; tests call them.
 */
import type { Core } from '../core/create-core';

export interface PowerHandler {
  suspend(): void;
  /** Returns the gap applied now (ms), or 0. */
  resume(): number;
  dispose(): void;
}

export function createPowerHandler(core: Pick<Core, 'gaps' | 'logger'>): PowerHandler {
  return {
    suspend() {
      core.logger.info('system suspending');
    },
    resume() {
      try {
        const gap = core.gaps.check('power resume');
        if (gap) core.logger.info('system resumed: the sleep was applied as a clock gap', { gapMs: gap.gapMs });
        return gap?.gapMs ?? 0;
      } catch (e) {
        // Storage refused the record: nothing was shifted, and the detector's next pulse tries again.
        core.logger.error('system resumed: the sleep could not be recorded yet', { error: e instanceof Error ? e.message : String(e) });
        return 0;
      }
    },
    dispose() {},
  };
}
