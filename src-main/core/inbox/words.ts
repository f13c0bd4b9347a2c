/**
 * What an inbox item says: its title and detail, from the facts about its subject (`about`) and
 * the occurrences folded into it (newest last). Pure. One describer per kind, so an item that
 * absorbs a twelfth missed slot reads "12 slots missed while Gaffer was asleep", not the first one.
 */
import { missingCase } from '../../common/errors';
import type { InboxKind } from '../../common/attention';

export type Facts = Record<string, unknown>;

const str = (v: unknown, fallback = '?'): string => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : fallback);
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function slotList(entries: Facts[], max = 5): string {
  const slots = entries.map((e) => str(e.slot));
  return slots.length <= max ? slots.join(', ') : `${slots.slice(0, max).join(', ')} and ${slots.length - max} more`;
}

/** Why slots were missed, as one phrase for all of them (asleep / not running / their own reason). */
function missedWhy(entries: Facts[]): string | null {
  if (entries.length > 0 && entries.every((e) => e.asleep === true)) return 'while Gaffer was asleep';
  if (entries.length > 0 && entries.every((e) => e.late === true)) return 'while Gaffer was not running';
  return null;
}

export function describe(kind: InboxKind, about: Facts, entries: Facts[], count: number): { title: string; detail: string } {
  const last = entries[entries.length - 1] ?? {};
  const job = str(about.job);
  switch (kind) {
    case 'needs_human': {
      if (about.taskId !== undefined) {
        return {
          title: `Task ${str(about.taskId)} “${str(about.title, '')}” is blocked: it needs a human`,
          detail: str(last.note, 'The agent reported the task blocked without a note.'),
        };
      }
      return { title: `${job} ${str(about.slot)} needs a human`, detail: str(last.error, 'The agent asked for a human decision.') };
    }
    case 'held':
      return { title: `${job} ${str(about.slot)} is held for review`, detail: str(last.error, 'The run failed with an error that is never retried automatically.') };
    case 'missed':
    case 'skipped_alert': {
      const why = missedWhy(entries);
      const what = kind === 'missed' ? 'missed' : 'skipped';
      const title = count === 1 ? `${job}: slot ${str(last.slot)} ${what}${why ? ` ${why}` : ''}` : `${job}: ${count} slots ${what}${why ? ` ${why}` : ''}`;
      const tail = kind === 'missed' ? 'They are in the backfill queue.' : 'The job’s policy is to skip them and tell you.';
      return { title, detail: `${count === 1 ? str(last.reason) : `Slots ${slotList(entries)}.`} ${count === 1 ? '' : tail}`.trim() };
    }
    case 'dead_man':
      return {
        title: count === 1 ? `${job}: slot ${str(last.slot)} did not start by the end of its window` : `${job}: ${count} slots did not start by the end of their windows`,
        detail: count === 1 ? str(last.reason, 'Nothing started it.') : `Slots ${slotList(entries)}. Latest: ${str(last.reason, 'nothing started it')}.`,
      };
    case 'repeated_failures':
      return {
        title: `${job} failed ${plural(Number(last.streak ?? count), 'time')} in a row`,
        detail: `Latest: ${str(last.slot)}: ${str(last.error, 'no error given')}`,
      };
    case 'stuck_queue':
      return {
        title: `Role ${str(about.role)}: ${plural(Number(last.ready ?? 0), 'task')} ready and no instance online`,
        detail: `The oldest has waited ${Math.round(Number(last.waitedS ?? 0) / 60)} min. ${last.lastSeen ? `An instance of the role was last seen at ${str(last.lastSeen)}.` : 'No instance of the role has ever connected.'}`,
      };
    case 'instance_lost': {
      const locks = Array.isArray(last.locks) ? (last.locks as Facts[]) : [];
      return {
        title: `Instance ${str(about.name, str(about.instanceId))} (${str(about.role)}) was lost holding ${plural(locks.length, 'lock')}`,
        detail: `${str(last.why, 'It stopped answering.')} Its tasks went back to the backlog: ${locks.map((l) => `${str(l.taskId)} “${str(l.title, '')}”`).join(', ')}.`,
      };
    }
    case 'budget':
      return { title: str(last.title, 'A spend cap was reached'), detail: str(last.detail, '') };
    // PROTOCOL §14: each occurrence carries its own words (core/budgets/windows.ts, core/budgets/loop-breaker.ts).
    case 'quota':
      return { title: str(last.title, 'A spend window is used up'), detail: str(last.detail, '') };
    case 'loop_breaker':
      return { title: str(last.title, 'The same error again and again'), detail: str(last.detail, '') };
    case 'run_failed':
      return {
        title: count === 1 ? `${job} ${str(last.slot)} failed` : `${job}: ${count} runs failed (latest ${str(last.slot)})`,
        detail: `${str(last.error, 'The run failed with no error given.')}${last.attempts !== undefined ? ` (after ${plural(Number(last.attempts), 'attempt')})` : ''}`,
      };
    case 'task_failed':
      return {
        title: `Task ${str(about.taskId)} “${str(about.title, '')}” failed`,
        detail: str(last.note, `It was reported failed by ${str(last.by, 'its agent')} with no note.`),
      };
    case 'crash_looping':
      return { title: `Managed agent ${str(about.name)} is crash looping`, detail: str(last.message, 'Its process keeps exiting right after it starts.') };
    case 'webhook_dead':
      return {
        title: count === 1 ? `A notification to ${str(about.url)} could not be delivered` : `${count} notifications to ${str(about.url)} could not be delivered`,
        detail: `“${str(last.title, 'an item')}”: ${str(last.error, 'the receiver did not answer')} (gave up after ${plural(Number(last.attempts ?? 0), 'attempt')}).`,
      };
    case 'verify_failed':
      return {
        title: `Task ${str(about.taskId)} “${str(about.title, '')}” said done, but its checks failed`,
        detail: `${str(last.error, 'A check failed.')} It waits for you: unblock it to try again, or cancel it.`,
      };
    case 'storage_fault':
      // Each occurrence is one finding with its own words (the audit log changed outside Gaffer, …).
      return { title: str(last.title, 'Storage fault'), detail: str(last.detail, '') };
    default:
      return missingCase(kind);
  }
}
