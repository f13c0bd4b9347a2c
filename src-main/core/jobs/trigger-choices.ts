/**
 * Which slot "run now" runs, said before it runs: the slot the current instant falls in (what
 * "run now" takes when no slot is named), the one before it, and the next one early — each with
 * what pressing the button would do to it (claim it, dispatch the run waiting for it, or nothing:
 * one run per slot).
 *
 * Invariants:
 * 1. `currentSlotOf` is the one definition of "the slot the current instant falls in": "run now"
 *    without a slot and the console's choices both use it, so what the dialog names is what runs.
 * 2. Read-only.
 * 3. Bounded: the slots are found by searches that stop at a count (`plan.latestAtOrBefore`,
 *    `latestDueBefore`), never by listing a range — an every-second job has 34 million slots in
 *    400 days, and this runs inside "run now"'s write transaction.
 */
import type { TriggerChoice } from '../../common/job-schema';
import type { JobPlan } from './plan';
import type { RunRow } from './rows';
import { runPhase } from './run-phase';
import type { SlotOccurrence } from './schedule';

const DAY_MS = 86_400_000;
/** How far back the current slot is looked for (a monthly or yearly job's last slot). */
const LOOKBACK_MS = 400 * DAY_MS;
/** Entries passed over at most while looking for the due slot before the current one (skipped days). */
const PREVIOUS_MAX_ENTRIES = 5000;

/** The latest slot (any disposition) due at or before `now`, else the first after it. */
export function currentSlotOf(plan: JobPlan, now: number): SlotOccurrence | undefined {
  return plan.latestAtOrBefore(now, LOOKBACK_MS) ?? plan.after(now);
}

/** What "run now" would do to a slot, given its run (if it has one). */
function effectOf(run: RunRow | undefined): Pick<TriggerChoice, 'effect' | 'run'> {
  if (!run) return { effect: 'claim', run: null };
  const summary = { id: run.id, status: run.status, disposition: run.disposition };
  // A run still being checked for its first attempt is dispatched now (as `runNow` does); any other keeps the slot's one run.
  if (runPhase(run) === 'checking') return { effect: 'dispatch', run: summary };
  return { effect: 'exists', run: summary };
}

function choice(which: TriggerChoice['which'], o: SlotOccurrence, runOf: (slot: string) => RunRow | undefined): TriggerChoice {
  return { which, slot: o.slot, at: new Date(o.at).toISOString(), local: o.local, disposition: o.disposition, ...(o.dayType ? { dayType: o.dayType } : {}), ...effectOf(runOf(o.slot)) };
}

/** The current slot, the due slot before it and the next slot, in that order (absent ones left out). */
export function triggerChoices(plan: JobPlan, now: number, runOf: (slot: string) => RunRow | undefined): TriggerChoice[] {
  const current = currentSlotOf(plan, now);
  if (!current) return [];
  const out = [choice('current', current, runOf)];
  const previous = plan.latestDueBefore(current.at, LOOKBACK_MS, PREVIOUS_MAX_ENTRIES);
  if (previous) out.push(choice('previous', previous, runOf));
  const next = plan.after(Math.max(now, current.at));
  if (next && next.slot !== current.slot) out.push(choice('next', next, runOf));
  return out;
}
