/** What the trigger dialog says about each slot it offers, and about what pressing Run will do. */
import type { TriggerChoice } from '../../../src-main/common/job-schema';

export function choiceTitle(which: TriggerChoice['which']): string {
  switch (which) {
    case 'current':
      return 'The slot now';
    case 'previous':
      return 'The slot before';
    case 'next':
      return 'The next slot, early';
  }
}

/** What running the slot does to it: a new run, the waiting one dispatched, or nothing (one run per slot). */
export function choiceEffect(c: Pick<TriggerChoice, 'effect' | 'run'>): string {
  switch (c.effect) {
    case 'claim':
      return 'No run yet: it is claimed and run.';
    case 'dispatch':
      return `Its run ${c.run?.id ?? ''} is waiting: it runs now.`;
    case 'exists':
      return `It already has run ${c.run?.id ?? ''}: nothing new — one run per slot; queue it for backfill to run it again.`;
  }
}

/** The sentence above the Run button: which slot, and when it starts. */
export function triggerSummary(slot: string, chosen: Pick<TriggerChoice, 'which' | 'effect'> | null, checkPreconditions: boolean): string {
  if (!slot) return 'Pick a slot.';
  const which = chosen?.which === 'current' ? ' (the slot the current instant falls in)' : '';
  return checkPreconditions ? `Claims slot ${slot}${which}; it runs as soon as its preconditions pass.` : `Runs slot ${slot}${which} now.`;
}
