/**
 * The rehearsal's upstream: every precondition of the job answers by the scenario's script ("the
 * data for this slot is ready from 09:40") instead of being checked for real. Nothing here reads a
 * file, sends a request, runs a command, reads a signal or asks an agent.
 *
 * Invariants:
 * 1. Each precondition keeps its live label (the name its verdicts are recorded under) and the
 *    target it would check, resolved for the slot exactly as the live check resolves it (the same
 *    placeholder function), so the timeline names what would have been looked at.
 * 2. Signals answer synchronously and the other kinds through a promise, as the live checks do, so
 *    the engine takes the same path (checks in flight, continuation after the transaction).
 */
import { preconditionLabel, type PreconditionInput } from '../../../common/job-schema';
import { resolvePlaceholders } from '../plan';
import type { CheckContext, CheckOutcome, PreconditionEvaluator } from '../preconditions';

/** When the scripted data of a slot is ready: an instant, or null for never (within the rehearsal). */
export type Readiness = (slot: string) => number | null;

/** One scripted evaluation, for the timeline's "waits". */
export interface Evaluation {
  at: number;
  slot: string;
  name: string;
  ready: boolean;
}

/** What the precondition would look at for `slot`, in a few words. */
export function checkTarget(p: PreconditionInput, slot: string): string {
  const r = (text: string) => {
    try {
      return resolvePlaceholders(text, slot).text;
    } catch {
      return text;
    }
  };
  switch (p.kind) {
    case 'signal':
      return `signal ${p.name} for ${r(p.key ?? '{date}')}`;
    case 'file':
      return `${r(p.path)} ${p.check === 'modified_after' ? 'modified after its time' : 'exists'}`;
    case 'http':
      return `GET ${r(p.url)}${p.jsonField ? ` (${p.jsonField})` : ''}`;
    case 'command':
      return `${p.argv.map(r).join(' ')} exits with 0`;
    case 'agent':
      return `agent precheck ${p.check}`;
  }
}

export function scriptedPreconditions(now: () => number, readiness: Readiness, log: (e: Evaluation) => void): PreconditionEvaluator {
  return (p: PreconditionInput, index: number, ctx: CheckContext) => {
    const at = now();
    const readyAt = readiness(ctx.slot);
    const ready = readyAt !== null && at >= readyAt;
    const name = preconditionLabel(p, index);
    log({ at, slot: ctx.slot, name, ready });
    const target = checkTarget(p, ctx.slot);
    const outcome: CheckOutcome = {
      name,
      kind: p.kind,
      verdict: ready ? 'ready' : 'not_ready',
      reason: ready ? `${target}: ready (rehearsal)` : `${target}: not ready yet (rehearsal)`,
      evidence: { rehearsal: true, target, readyAt: readyAt === null ? null : new Date(readyAt).toISOString() },
    };
    return p.kind === 'signal' ? outcome : Promise.resolve(outcome);
  };
}
