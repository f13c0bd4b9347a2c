/**
 * Pure logic of "Why didn't it run?": the headline verdict of an explanation (keeping "did not run
 * because not ready" apart from "ran and failed", and past facts apart from forecasts), the four
 * layers in the order they are evaluated, and the quick picks of the instant picker.
 */
import type { Explanation, LayerItem, LayerVerdict } from '../../../src-main/common/job-schema';
import { addDays } from '../../lib/days';
import { checksFailedWords } from '../../lib/run-words';
import { localInZone, zonedWallToUtc } from '../../lib/zones';

export type VerdictKind =
  | 'ran_ok'
  | 'ran_failed'
  | 'not_ready'
  | 'skipped_operator'
  | 'skipped_calendar'
  | 'missed'
  | 'in_progress'
  | 'will_run'
  | 'will_not_run'
  | 'no_slot'
  | 'no_record';

export interface Verdict {
  kind: VerdictKind;
  /** Short headline. */
  title: string;
  tone: 'done' | 'failed' | 'blocked' | 'cancelled' | 'progress' | 'ready' | 'neutral';
  /** One line telling what kind of outcome this is (readiness is not failure). */
  note: string;
}

export function verdictOf(e: Explanation): Verdict {
  const d = e.run?.disposition;
  if (e.run && d) {
    switch (d) {
      case 'ran':
        return { kind: 'ran_ok', title: 'Ran successfully', tone: 'done', note: 'Recorded fact: the agent reported success.' };
      case 'backfilled':
        return { kind: 'ran_ok', title: 'Ran later (backfilled)', tone: 'done', note: 'Recorded fact: the slot was completed from the backfill queue.' };
      case 'failed':
      case 'held':
        // "Done when…": the agent reported success and Gaffer's own checks found the work not done.
        if (checksFailedWords(e.run.lastError))
          return {
            kind: 'ran_failed',
            title: d === 'held' ? 'Ran, but the work did not pass its checks — held for review' : 'Ran, but the work did not pass its checks',
            tone: 'failed',
            note: 'It DID run and the agent said done; Gaffer checked the work itself and it was not done. This is not a readiness problem.',
          };
        return {
          kind: 'ran_failed',
          title: d === 'held' ? 'Ran and failed — held for review' : 'Ran and failed',
          tone: 'failed',
          note: 'It DID run: an agent took the trigger and reported a failure. This is not a readiness problem.',
        };
      case 'skipped_not_ready':
        return { kind: 'not_ready', title: 'Did not run: not ready', tone: 'blocked', note: 'It never ran: a precondition was still not ready when the window closed. Nothing failed.' };
      case 'skipped_calendar':
      case 'skipped_dst':
        return { kind: 'skipped_calendar', title: d === 'skipped_dst' ? 'No run: the local time did not exist (DST)' : 'No run: not a workday', tone: 'cancelled', note: 'Nothing was expected for this slot.' };
      case 'skipped_paused':
      case 'skipped_kill_switch':
      case 'skipped_disabled':
      case 'skipped_maintenance':
      case 'skipped_quota':
      case 'skipped_overlap':
        return { kind: 'skipped_operator', title: `Did not run: ${d.replace('skipped_', '').replace('_', ' ')}`, tone: 'blocked', note: 'It never ran: an execution condition (operator control or policy) held it back.' };
      case 'missed':
        return { kind: 'missed', title: 'Did not run: missed', tone: 'failed', note: 'The window passed without a run (Gaffer not running, or past the tolerance).' };
      case 'folded':
        return { kind: 'missed', title: 'Folded into a later run', tone: 'ready', note: 'It did not run on its own; a later run covers it.' };
      case 'verifying':
        return { kind: 'in_progress', title: 'Ran; Gaffer is checking the work', tone: 'progress', note: 'The agent said done; it counts as a success once its checks pass.' };
      case 'retry_scheduled':
        return checksFailedWords(e.run.lastError)
          ? { kind: 'in_progress', title: 'The work did not pass its checks; a retry is scheduled', tone: 'progress', note: 'The next attempt is told what failed. The outcome is not final yet.' }
          : { kind: 'in_progress', title: 'Failed an attempt; a retry is scheduled', tone: 'progress', note: 'Recorded so far; the outcome is not final yet.' };
      case 'waiting':
      case 'dispatched':
      case 'running':
        return { kind: 'in_progress', title: d === 'waiting' ? 'Waiting (window open, being checked)' : 'In progress', tone: 'progress', note: 'Recorded so far; the outcome is not final yet.' };
    }
  }
  if (!e.slot) return { kind: 'no_slot', title: 'No slot at this time', tone: 'neutral', note: 'The schedule has no slot at or before this instant.' };
  if (e.tense === 'future') {
    const blocked = e.slot.disposition !== 'due' || !e.jobState.enabled || e.jobState.paused || e.jobState.killSwitch.on;
    return blocked
      ? { kind: 'will_not_run', title: 'Forecast: will not run as things stand', tone: 'blocked', note: 'A forecast from the current settings, not a recorded fact.' }
      : { kind: 'will_run', title: 'Forecast: will be checked and run', tone: 'ready', note: 'A forecast from the current settings, not a recorded fact.' };
  }
  if (e.slot.disposition !== 'due') return { kind: 'skipped_calendar', title: 'No run expected', tone: 'cancelled', note: 'The schedule skips this slot (calendar or DST).' };
  return { kind: 'no_record', title: 'No run was recorded', tone: 'failed', note: 'Past slot with no record: the runner never reached it.' };
}

export interface LayerView {
  key: 'time' | 'preconditions' | 'execution' | 'overlap';
  step: number;
  title: string;
  verdict: LayerVerdict['verdict'];
  reason: string;
  items: LayerItem[];
}

const OVERLAP_ITEMS = new Set(['overlap', 'order']);

/**
 * The four layers, in evaluation order: time → preconditions → execution conditions → overlap /
 * existing run. The overlap item (and the backfill order) is taken out of the execution layer.
 */
export function layersOf(e: Explanation): LayerView[] {
  const exec = e.layers.execution;
  // What holds the slot back comes first; passing conditions after, in their order.
  const severity = (v: LayerItem['verdict']) => (v === 'error' ? 0 : v === 'not_ready' ? 1 : v === 'unknown' ? 2 : 3);
  const execItems = exec.items.filter((i) => !OVERLAP_ITEMS.has(i.name)).sort((a, b) => severity(a.verdict) - severity(b.verdict));
  const overlapItems = exec.items.filter((i) => OVERLAP_ITEMS.has(i.name));
  const run = e.run;
  let overlapVerdict: LayerVerdict['verdict'] = overlapItems.find((i) => i.verdict !== 'ready')?.verdict ?? (overlapItems.length ? 'ready' : 'unknown');
  let overlapReason = overlapItems.map((i) => i.reason).join('; ');
  if (run) {
    overlapVerdict = run.disposition === 'skipped_overlap' ? 'not_ready' : 'ready';
    overlapReason = `run ${run.id} exists for slot ${run.slot} (${run.status}, ${run.disposition}${run.trigger === 'manual' ? ', run by hand' : ''}): one run per slot${overlapReason ? `; ${overlapReason}` : ''}`;
  } else if (!overlapReason) overlapReason = e.tense === 'future' ? 'no run exists yet for this slot' : 'no run was recorded for this slot';
  return [
    { key: 'time', step: 1, title: 'Time', verdict: e.layers.time.verdict, reason: e.layers.time.reason, items: e.layers.time.items },
    { key: 'preconditions', step: 2, title: 'Preconditions', verdict: e.layers.preconditions.verdict, reason: e.layers.preconditions.reason, items: e.layers.preconditions.items },
    {
      key: 'execution',
      step: 3,
      title: 'Execution conditions',
      verdict: execItems.find((i) => i.verdict === 'not_ready' || i.verdict === 'error')?.verdict ?? exec.verdict,
      reason: exec.reason,
      items: execItems,
    },
    { key: 'overlap', step: 4, title: 'Overlap / existing run', verdict: overlapVerdict, reason: overlapReason, items: overlapItems },
  ];
}


export interface QuickPick {
  id: string;
  label: string;
  /** Local time in the job's zone. */
  local: string;
}

/**
 * Quick picks in the job's zone: yesterday / tomorrow at the job's usual time (HH:MM of its next
 * slot, else 09:00), now, and the next slot itself.
 */
export function quickPicks(now: number, zone: string, nextSlotAt: string | null): QuickPick[] {
  const localNow = localInZone(now, zone);
  const today = localNow.slice(0, 10);
  const hhmm = nextSlotAt ? localInZone(Date.parse(nextSlotAt), zone).slice(11, 16) : '09:00';
  const picks: QuickPick[] = [
    { id: 'yesterday', label: `yesterday ${hhmm}`, local: `${addDays(today, -1)}T${hhmm}` },
    { id: 'now', label: 'now', local: localNow },
    { id: 'tomorrow', label: `tomorrow ${hhmm}`, local: `${addDays(today, 1)}T${hhmm}` },
  ];
  if (nextSlotAt) picks.push({ id: 'next', label: 'next slot', local: localInZone(Date.parse(nextSlotAt), zone) });
  return picks;
}

/** The instant to ask about, from a local time in the job's zone (null when it cannot be read). */
export function instantOf(local: string, zone: string): string | null {
  const t = zonedWallToUtc(local, zone);
  return t === null ? null : new Date(t).toISOString();
}


/** The layer that held the slot back (the first that did not pass), and the item that said so. */
export function blockingLayer(layers: readonly LayerView[]): { layer: LayerView; item: LayerItem | null } | null {
  for (const l of layers) {
    if (l.verdict !== 'not_ready' && l.verdict !== 'error') continue;
    return { layer: l, item: l.items.find((i) => i.verdict === 'not_ready' || i.verdict === 'error') ?? null };
  }
  return null;
}

/** Something the operator can do about what the answer shows, as a button beside it. */
export type WhyFix =
  | { kind: 'signal'; name: string; key: string }
  | { kind: 'resume' }
  | { kind: 'killSwitchOff' }
  | { kind: 'enable' }
  | { kind: 'backfill'; slot: string }
  | { kind: 'runSlot'; slot: string };

/** A signal precondition's evidence, recorded (`name`, `setAt`) or forecast (`signal`, `setNow`), read the same way. */
function signalOf(item: LayerItem): { name: string; key: string; set: boolean } | null {
  const ev = item.evidence as { name?: unknown; signal?: unknown; key?: unknown; setAt?: unknown; setNow?: unknown } | undefined;
  if (!ev || typeof ev !== 'object' || typeof ev.key !== 'string') return null;
  const name = typeof ev.name === 'string' ? ev.name : typeof ev.signal === 'string' ? ev.signal : null;
  if (!name) return null;
  return { name, key: ev.key, set: (typeof ev.setAt === 'string' && ev.setAt !== '') || ev.setNow === true };
}

const DONE = new Set(['ran', 'backfilled']);
const NOT_EXPECTED = new Set(['skipped_calendar', 'skipped_dst']);

/**
 * The fixes at hand for an answer: set a missing signal (for the slot's key), resume the job,
 * turn the kill switch off, enable the job, queue a finished-without-success slot for backfill,
 * or run a past slot nobody ran. Each is offered only when it applies now.
 */
export function fixesFor(e: Explanation): WhyFix[] {
  const out: WhyFix[] = [];
  const d = e.run?.disposition;
  const settled = d !== undefined && DONE.has(d);
  if (!settled && e.slot?.disposition === 'due') {
    for (const item of e.layers.preconditions.items) {
      const s = signalOf(item);
      if (s && !s.set && !out.some((f) => f.kind === 'signal' && f.name === s.name && f.key === s.key)) out.push({ kind: 'signal', name: s.name, key: s.key });
    }
  }
  if (e.jobState.killSwitch.on) out.push({ kind: 'killSwitchOff' });
  if (e.jobState.paused) out.push({ kind: 'resume' });
  if (!e.jobState.enabled) out.push({ kind: 'enable' });
  const open = e.backfills.some((b) => b.status === 'queued' || b.status === 'held' || b.status === 'dispatched');
  if (e.run && (e.run.status === 'failed' || e.run.status === 'skipped') && !settled && !NOT_EXPECTED.has(e.run.disposition) && !open) out.push({ kind: 'backfill', slot: e.run.slot });
  if (!e.run && e.tense === 'past' && e.slot && e.slot.disposition === 'due') out.push({ kind: 'runSlot', slot: e.slot.slot });
  return out;
}
