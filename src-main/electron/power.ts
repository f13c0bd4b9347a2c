/**
 * Sleep and wake (SPEC §9: "a laptop that sleeps for hours wakes up without a storm").
 * On resume the time spent asleep is reported to the core as a clock jump, so lock windows and
 * heartbeats are shifted by the gap instead of all expiring at once (watchdog invariant 3).
 *
 * 1. The gap is measured on the core's clock from the `suspend` event to the `resume` event.
 * 2. If the watchdog already noticed the jump itself (a tick ran before `resume` arrived), the
 *    gap is not applied a second time.
 * 3. Short naps (under `minGapMs`) are ignored: lock windows are hours long.
 * No electron import: the shell wires `powerMonitor` to `suspend()` / `resume()`; tests call them.
 */
import type { Core } from '../core/create-core';

export interface PowerHandler {
  suspend(): void;
  /** Returns the gap applied (ms), or 0. */
  resume(): number;
  dispose(): void;
}

export function createPowerHandler(core: Pick<Core, 'clock' | 'events' | 'watchdog' | 'logger'>, minGapMs = 5000): PowerHandler {
  let suspendedAt: number | null = null;
  let lastJumpAt = -Infinity;
  const sub = core.events.on('clock.jumped', () => {
    lastJumpAt = core.clock.now();
  });
  return {
    suspend() {
      suspendedAt = core.clock.now();
      core.logger.info('system suspending');
    },
    resume() {
      const from = suspendedAt;
      suspendedAt = null;
      if (from === null) return 0;
      const now = core.clock.now();
      const gap = now - from;
      if (gap < minGapMs || lastJumpAt >= from) return 0;
      core.logger.info('system resumed: treating the sleep as a clock jump', { gapMs: gap });
      core.watchdog.onClockJump(from, now);
      return gap;
    },
    dispose() {
      sub.dispose();
    },
  };
}
