/**
 * Pure logic of the Jobs views: each policy explained in a plain sentence
 * (shown next to the setting in the editor), and the list's status of a job.
 */
import type { JobSchedule, JobSpec, JobSummary, PreconditionInput, PreviewItem } from '../../../src-main/common/job-schema';
import { formatDurationS } from '../../lib/format';
import { DAY_NAMES, describeSchedule, granularity, joinWords } from '../../lib/schedule-words';
import { zoneParts } from '../../lib/zones';

function nextRunWords(s: JobSchedule): string {
  switch (granularity(s)) {
    case 'day':
      return 'the next run (tomorrow’s, or the next workday’s)';
    case 'week':
      return 'next week’s run';
    case 'month':
      return 'next month’s run';
    case 'minute':
      return 'the next run';
  }
}

function windowWords(spec: JobSpec): string {
  const zone = spec.schedule.timezone ?? 'UTC';
  return spec.window ? `the ${spec.window.start}–${spec.window.end} window (${zone})` : 'the slot’s window (until the next slot is due)';
}

export type PolicyKey = 'schedule' | 'window' | 'calendar' | 'preconditions' | 'executionConditions' | 'retry' | 'missedWindow' | 'overlap' | 'dstGapPolicy' | 'backfillCapPerTick' | 'runTimeoutS' | 'payload';

/**
 * Every policy of a (normalised) job in one plain sentence each, for the editor: what happens,
 * in the operator's words, with this job's own values.
 */
export function policySentences(spec: JobSpec, calendarName?: string): Record<PolicyKey, string> {
  const zone = spec.schedule.timezone ?? 'UTC';
  const w = windowWords(spec);
  const r = spec.retry;
  const retries = r.maxAttempts - 1;
  const cal = spec.calendar ? `calendar “${calendarName ?? spec.calendar}”` : null;
  const mw = spec.executionConditions.maintenanceWindows ?? [];
  const quota = spec.executionConditions.maxConcurrentPerRole;
  const missed: string =
    spec.missedWindow === 'run_now'
      ? `If ${w} closes before the slot could start (data not ready, Gaffer asleep), it may still start ${spec.toleranceS !== undefined ? `up to ${formatDurationS(spec.toleranceS)} later` : 'within the tolerance you set'}; past that it goes to the backfill queue and runs at the next window, oldest first.`
      : spec.missedWindow === 'fold_into_next'
        ? `If ${w} closes before the data is ready, this slot is folded into ${nextRunWords(spec.schedule)}: that run also covers it (oldest first), and nothing runs twice.`
        : `If ${w} closes before the slot could start, it is skipped and recorded as missed, and you get an alert; you decide whether to queue it for backfill.`;
  return {
    schedule: `Looks at the job ${describeSchedule(spec.schedule, spec.calendar)} (${spec.schedule.everyS !== undefined && !spec.schedule.timezone ? 'UTC dates' : zone}). Time says when to check, not when to execute: the other layers decide.`,
    window: spec.window
      ? `Each slot may start only between ${spec.window.start} and ${spec.window.end} ${zone} time; while something is not ready it is re-checked every ${formatDurationS(spec.window.recheckEveryS)}.`
      : 'No execution window: a slot may start from its due time until the next slot is due, re-checked every few minutes while not ready.',
    calendar: cal
      ? spec.calendarPolicy === 'next_workday'
        ? `On a non-workday of ${cal} (weekend or holiday) the slot moves to the next workday; make-up workdays count as workdays.`
        : `On a non-workday of ${cal} (weekend or holiday) the slot is skipped and recorded as “skipped: calendar”; make-up workdays count as workdays.`
      : 'No business calendar: every day the schedule names is a working day.',
    preconditions: spec.preconditions.length
      ? `All ${spec.preconditions.length} check${spec.preconditions.length === 1 ? '' : 's'} must be ready before the slot is dispatched; each records its verdict with evidence (the exact path, key or date range it looked at). “Not ready” is not a failure: it is re-checked until the window closes.`
      : 'No preconditions: the slot is dispatched as soon as its window opens.',
    executionConditions:
      [
        quota !== undefined ? `At most ${quota} run${quota === 1 ? '' : 's'} of role ${spec.role} at once (all its jobs).` : null,
        mw.length ? `Nothing is dispatched during ${joinWords(mw.map((m) => `${m.start}–${m.end}${m.days ? ` (${m.days.map((d) => DAY_NAMES[d]!.slice(0, 3)).join(', ')})` : ''}`))} ${zone} time.` : null,
        'The global kill switch and a pause (with its reason) always stop dispatching.',
      ]
        .filter(Boolean)
        .join(' '),
    retry:
      retries > 0
        ? `A retryable failure (timeout, rate limit) is retried up to ${retries} time${retries === 1 ? '' : 's'}, first after ${formatDurationS(r.firstDelayS)}${r.backoff === 'exponential' ? ', doubling each time' : ''} — a due time in the database, never a sleeping worker. Fatal errors are held for review; “needs human” is held and alerted at once. Neither is retried.`
        : 'No retries: any failure is final for the slot (held for review when fatal or needs-human).',
    missedWindow: missed,
    overlap:
      spec.overlap === 'skip'
        ? 'If the previous run is still going when a slot opens, the new slot is skipped and recorded as “skipped: overlap”.'
        : spec.overlap === 'queue_one'
          ? 'If the previous run is still going when a slot opens, the new slot waits for it (at most one waits; a third is skipped).'
          : 'Runs may overlap: a new slot starts even while the previous run is still going.',
    dstGapPolicy:
      spec.dstGapPolicy === 'shift_forward'
        ? 'If a local time does not exist (the spring-forward DST gap) the slot runs at the end of the gap; a repeated local time (fall-back) runs once. Never twice, never silently dropped.'
        : 'If a local time does not exist (the spring-forward DST gap) the slot is skipped and recorded as “skipped: DST”; a repeated local time runs once.',
    backfillCapPerTick:
      spec.backfillCapPerTick > 0
        ? `After an outage, at most ${spec.backfillCapPerTick} queued backfill${spec.backfillCapPerTick === 1 ? '' : 's'} run each time a new slot opens, oldest first and before the new slot — no storm.`
        : 'Backfills never run on their own: queued slots wait until you press “Run now” in the backfill queue.',
    runTimeoutS: `An attempt not finished ${formatDurationS(spec.runTimeoutS)} after dispatch counts as lost: it is retried (as retryable) and told which steps already completed.`,
    payload: 'Sent to the agent with every trigger, together with an idempotency key (job + slot) it should pass on to the systems it calls.',
  };
}

/** What the list says about a job's state, most important first. */
export function jobState(j: Pick<JobSummary, 'enabled' | 'paused'>): { label: string; tone: string } {
  if (!j.enabled) return { label: 'Disabled', tone: 'cancelled' };
  if (j.paused) return { label: 'Paused', tone: 'blocked' };
  return { label: 'Active', tone: 'online' };
}

/** One preview row in words: what happens to that slot and why. */
export function previewNote(p: PreviewItem): string {
  if (p.disposition === 'calendar_skip') return `skipped: ${p.dayType === 'holiday' ? 'holiday' : p.dayType === 'weekend' ? 'weekend' : 'not a workday'}`;
  if (p.disposition === 'dst_skip') return 'skipped: local time does not exist (DST gap)';
  const notes: string[] = [];
  if (p.movedFrom) notes.push(`moved from ${p.movedFrom} (non-workday)`);
  if (p.shifted === 'dst_gap') notes.push('shifted past the DST gap');
  if (p.dayType === 'extra_workday') notes.push('make-up workday');
  return notes.join('; ');
}

/** What one precondition checks, in words (its placeholders are resolved per slot). */
export function preconditionSentence(p: PreconditionInput, jobRole: string): string {
  switch (p.kind) {
    case 'file':
      return p.check === 'modified_after'
        ? `Ready when ${p.path || '…'} exists and was modified after ${p.after === 'slot' ? 'the slot’s due time' : p.after === 'yesterday' ? 'midnight of the day before the slot’s date' : 'midnight of the slot’s date'}.`
        : `Ready when ${p.path || '…'} exists.`;
    case 'http':
      return `Ready when GET ${p.url || '…'} answers ${p.expectStatus ?? 200}${p.jsonField ? ` and its JSON field ${p.jsonField} ${p.equals !== undefined ? `equals ${JSON.stringify(p.equals)}` : 'is truthy'}` : ''} (timeout ${p.timeoutS ?? 10} s).`;
    case 'command':
      return `Ready when ${p.argv.length ? p.argv.join(' ') : '…'} exits with code 0 (no shell; timeout ${p.timeoutS ?? 10} s).`;
    case 'signal':
      return `Ready when signal ${p.name || '…'} is set for ${p.key ?? '{date}'} (POST /api/v1/signals), e.g. by the upstream job.`;
    case 'agent':
      return `Ready when an online ${p.role ?? jobRole} agent answers precheck “${p.check || '…'}” with ready (agent.onPrecheck in the SDK).`;
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (n: number) => String(n).padStart(2, '0');

/** A rehearsal moment in the job's zone: "Fri 27 Nov" and "09:00", or "09:00:01" when the seconds matter. */
export function dayAndTime(at: string, zone: string): { day: string; time: string } {
  const z = zoneParts(Date.parse(at), zone);
  return { day: `${z.weekday} ${z.day} ${MONTHS[z.month - 1]}`, time: `${p2(z.hour)}:${p2(z.minute)}${z.second ? `:${p2(z.second)}` : ''}` };
}
