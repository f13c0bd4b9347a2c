/**
 * A scenario's plain verdict ("ran once", "ran late", "missed → backfilled the next day", "held for
 * a human"), whether it ends well, and its surprise said plainly — read from the slot ledger and
 * the timeline the engine produced. Nothing here decides what happens to a slot; it says what did.
 *
 * Invariants:
 * 1. A scenario ends badly when a slot it is about is lost (skipped or failed with nothing to make
 *    it up), held, run without its data, or still open when the rehearsal ends.
 * 2. At most one surprise per scenario: the first thing in the timeline an operator would not
 *    expect from reading the settings; its event is flagged `surprise`.
 */
import { MISSED_WINDOW_LABELS, quoted } from '../../../common/job-labels';
import { retryDelayS, type Backfill, type JobSpec, type Run } from '../../../common/job-schema';
import type { RehearsalOutcome } from '../../../common/rehearsal';
import type { ScenarioScript, SlotInfo } from './scenarios';
import type { TimelineEvent } from './timeline';
import { duration, ordinal, type ZoneWords } from './words';

export interface Verdict {
  outcome: RehearsalOutcome;
  verdict: string;
  endsWell: boolean;
  surprise: string | null;
}

export interface VerdictInput {
  script: ScenarioScript;
  spec: JobSpec;
  runs: Map<string, Run>;
  backfills: Map<string, Backfill>;
  events: TimelineEvent[];
  words: ZoneWords;
  recheckMs: number;
}

interface Fate {
  outcome: RehearsalOutcome;
  words: string;
  good: boolean;
}

/** How bad an outcome is, for a scenario about several slots (the worst one names the scenario). */
const SEVERITY: Record<RehearsalOutcome, number> = { ran_once: 0, ran_late: 1, folded: 2, backfilled: 2, held: 4, missed: 5, failed: 5, unfinished: 6 };

export function verdictOf(v: VerdictInput): Verdict {
  switch (v.script.name) {
    case 'normal':
      return single(v, v.script.focus[0]!);
    case 'data_delay':
      return dataDelay(v);
    case 'downstream_timeout':
      return downstream(v);
    case 'process_restart':
      return restart(v);
    case 'cross_day_backfill':
      return crossDay(v);
    case 'said_done_not_done':
      return saidDone(v);
  }
}

/**
 * The agent said done without doing the work (PROTOCOL §13): with checks, Gaffer finds it out and
 * `onFail` decides (retried, held for a human, failed); without, the slot counts as a success that
 * is not one — that ends badly, whatever the ledger says.
 */
function saidDone(v: VerdictInput): Verdict {
  const s = v.script.focus[0]!;
  const f = fateOf(v, s);
  if (!v.spec.verify) {
    const done = v.events.find((e) => e.slot === s.slot && e.kind === 'success');
    return {
      outcome: f.outcome,
      verdict: `${f.words}, but the work was not done: the job has no "done when…" checks, so Gaffer took the agent's word`,
      endsWell: false,
      surprise: flag(done, 'the slot is marked a success although the report was never sent: add "done when…" checks'),
    };
  }
  const caught = v.events.find((e) => e.slot === s.slot && e.kind === 'check' && e.detail.startsWith('Gaffer checks the work itself: the agent said done'));
  const onFail = v.spec.verify.onFail ?? 'retry';
  const then = onFail === 'retry' ? 'tried again, told what failed' : onFail === 'needs_human' ? 'held for you to decide' : 'failed, as the job says';
  return {
    outcome: f.outcome,
    verdict: `the agent said done but the check failed → ${then}; ${f.words}`,
    // Held for a human is what needs_human asks for: the rehearsal ends as the job says it should.
    endsWell: f.good || (onFail === 'needs_human' && f.outcome === 'held'),
    surprise: caught ? flag(caught, 'the agent said done on its first attempt, but Gaffer’s own checks found the work not done') : null,
  };
}

// ---- slots -----------------------------------------------------------------------------------

function firstDispatch(v: VerdictInput, slot: string): TimelineEvent | undefined {
  return v.events.find((e) => e.slot === slot && e.kind === 'dispatch');
}

/** What became of one slot. */
function fateOf(v: VerdictInput, s: SlotInfo): Fate {
  const run = v.runs.get(s.slot);
  const bf = v.backfills.get(s.slot);
  const w = v.words;
  if (!run) return { outcome: 'unfinished', words: 'never came due within the rehearsal', good: false };
  if (run.status === 'pending' || run.status === 'running') return { outcome: 'unfinished', words: `still ${run.disposition.replace('_', ' ')} when the rehearsal ends`, good: false };
  if (run.status === 'success') {
    const d = firstDispatch(v, s.slot);
    const tries = run.attempt > 1 ? ` (on the ${ordinal(run.attempt)} attempt)` : '';
    if (run.trigger === 'catch_up') return { outcome: 'ran_late', words: `ran late (${d ? w.time(d.ms, s.at) : 'after its window'}, within the tolerance)${tries}`, good: true };
    if (d && d.ms - s.opensAt > 60_000) return { outcome: 'ran_late', words: `ran late (${w.time(d.ms, s.at)})${tries}`, good: true };
    return { outcome: 'ran_once', words: `ran once${tries}`, good: true };
  }
  // Attempts of the slot itself (a backfill's attempts continue the count).
  const own = run.attempt - (bf?.attempts ?? 0);
  const before = run.status === 'failed' && run.errorClass ? `failed after ${own} attempt${own === 1 ? '' : 's'}` : 'missed';
  if (run.disposition === 'backfilled') {
    if (run.coveredBy) {
      const by = [...v.runs.values()].find((r) => r.id === run.coveredBy);
      return { outcome: 'folded', words: `${before} → folded into ${by ? `the run of ${by.slot}` : 'a later run'}`, good: true };
    }
    const at = bf?.finishedAt ? Date.parse(bf.finishedAt) : undefined;
    const when = at === undefined ? '' : w.date(at) > w.date(s.at) ? ` the next day (${w.moment(at)})` : ` at ${w.time(at, s.at)}`;
    return { outcome: 'backfilled', words: `${before} → backfilled${when}`, good: true };
  }
  if (run.disposition === 'held' || bf?.status === 'held') return { outcome: 'held', words: 'held for a human', good: false };
  if (run.disposition === 'folded') return { outcome: 'folded', words: `${before} → folded into the next run`, good: true };
  if (bf && (bf.status === 'queued' || bf.status === 'dispatched')) {
    const auto = v.spec.backfillCapPerTick > 0;
    return { outcome: run.disposition === 'missed' || run.status !== 'failed' ? 'missed' : 'failed', words: `${before} → queued for backfill (${auto ? 'runs when a later slot opens' : 'waits for an operator: 0 backfills per slot'})`, good: auto };
  }
  if (bf?.status === 'failed') return { outcome: 'failed', words: `${before}; its backfill failed too`, good: false };
  if (run.status === 'failed' && run.errorClass) return { outcome: 'failed', words: `${before}; nothing makes it up (an alert only)`, good: false };
  if (run.disposition === 'skipped_overlap') return { outcome: 'missed', words: 'skipped: the previous run was still going', good: false };
  return { outcome: 'missed', words: 'missed, never made up (an alert only)', good: false };
}

function worst(fates: Fate[]): RehearsalOutcome {
  return fates.reduce((a, f) => (SEVERITY[f.outcome] > SEVERITY[a] ? f.outcome : a), 'ran_once' as RehearsalOutcome);
}

/** Flags the event and returns the surprise. */
function flag(e: TimelineEvent | undefined, text: string): string {
  if (e) e.surprise = true;
  return text;
}

// ---- surprises everyone can meet -------------------------------------------------------------

/** A retry that would start after the window closes, so the slot fails with attempts left. */
function retryPastWindow(v: VerdictInput, s: SlotInfo): string | null {
  const run = v.runs.get(s.slot);
  const e = v.events.find((x) => x.slot === s.slot && x.kind === 'failed' && /after the window closes/.test(x.detail));
  if (!run || !e) return null;
  // Retries are counted on the run; the one that did not fit is the next.
  const n = run.retryCount + 2;
  const due = e.ms + retryDelayS(v.spec.retry, run.retryCount + 1) * 1000;
  const unused = v.spec.retry.maxAttempts - (run.retryCount + 1);
  return flag(e, `the ${ordinal(n)} attempt would be due at ${v.words.time(due, s.at)}, but the window closes at ${v.words.time(s.latestStart, s.at)}, so it never runs: the slot fails with ${unused} attempt${unused === 1 ? '' : 's'} unused`);
}

/** A slot lost under "Skip and alert". */
function lostSlot(v: VerdictInput, s: SlotInfo, f: Fate): string | null {
  if (f.good || (f.outcome !== 'missed' && f.outcome !== 'failed')) return null;
  const e = v.events.find((x) => x.slot === s.slot && (x.kind === 'missed' || x.kind === 'failed'));
  return flag(e, `slot ${s.slot} is lost: under ${quoted(MISSED_WINDOW_LABELS[v.spec.missedWindow])} nothing runs it later (choose ${quoted(MISSED_WINDOW_LABELS.run_now)} or ${quoted(MISSED_WINDOW_LABELS.fold_into_next)} to make it up)`);
}

/** A slot folded into a later run: it never runs on its own. */
function foldedInto(v: VerdictInput, s: SlotInfo, f: Fate): string | null {
  if (f.outcome !== 'folded') return null;
  const e = v.events.find((x) => x.slot === s.slot && x.kind === 'fold');
  return flag(e, `slot ${s.slot} never runs on its own: a later run covers it, and the agent must do its work too (the trigger lists it under covers)`);
}

function orderly(v: VerdictInput, slots: SlotInfo[]): string | null {
  for (const s of slots) {
    const f = fateOf(v, s);
    const why = retryPastWindow(v, s) ?? lostSlot(v, s, f) ?? foldedInto(v, s, f);
    if (why) return why;
    if (f.outcome === 'held') return flag(v.events.find((x) => x.slot === s.slot && x.kind === 'hold'), `slot ${s.slot} stops until a human decides`);
    if (f.outcome === 'unfinished') return flag(v.events.filter((x) => x.slot === s.slot).pop(), `slot ${s.slot} is still open when the rehearsal ends`);
  }
  return null;
}

function single(v: VerdictInput, s: SlotInfo): Verdict {
  const f = fateOf(v, s);
  let surprise = orderly(v, [s]);
  if (!surprise && f.outcome === 'ran_late') {
    const d = firstDispatch(v, s.slot)!;
    const why = [...v.events].reverse().find((e) => e.ms <= d.ms && e.slot === s.slot && e.kind === 'check' && e.detail.startsWith('not dispatched'));
    surprise = flag(why ?? d, `it starts only at ${v.words.time(d.ms, s.at)}, ${duration(d.ms - s.opensAt)} after its window opened${why ? `: ${why.detail.replace(/^not dispatched yet: /, '')}` : ''}`);
  }
  return { outcome: f.outcome, verdict: f.words, endsWell: f.good, surprise };
}

// ---- the scenarios ---------------------------------------------------------------------------

function dataDelay(v: VerdictInput): Verdict {
  const [s0, s1] = v.script.focus as [SlotInfo, SlotInfo, SlotInfo];
  const f0 = fateOf(v, s0);
  const f1 = fateOf(v, s1);
  const verdict = `${f0.words}; when the data came after the window: ${f1.words}`;
  if (v.spec.preconditions.length === 0) {
    const d = firstDispatch(v, s0.slot);
    return {
      outcome: worst([f0, f1]),
      verdict: `ran on time — on data that was not there yet (${s0.slot}'s came at ${v.words.time(v.script.readyAt.get(s0.slot)!, s0.at)})`,
      endsWell: false,
      surprise: flag(d, 'the job has no precondition, so it does not wait for the data: a late upstream goes unnoticed and the work is done on what is there'),
    };
  }
  let surprise = orderly(v, [s0, s1]);
  const ready = v.script.readyAt.get(s0.slot)!;
  const d = firstDispatch(v, s0.slot);
  if (!surprise && d && d.ms - ready >= 30_000) {
    surprise = flag(d, `the data of ${s0.slot} was ready at ${v.words.time(ready, s0.at)} but the run started only at ${v.words.time(d.ms, s0.at)}: the preconditions are looked at again only every ${duration(v.recheckMs)}`);
  }
  return { outcome: worst([f0, f1]), verdict, endsWell: f0.good && f1.good, surprise };
}

function downstream(v: VerdictInput): Verdict {
  const [s0, s1] = v.script.focus as [SlotInfo, SlotInfo];
  const f0 = fateOf(v, s0);
  const f1 = fateOf(v, s1);
  const retries = v.events.filter((e) => e.slot === s0.slot && e.kind === 'retry').length;
  const verdict = f1.good ? f0.words : `${f0.words}; then ${s1.slot}: ${f1.words}`;
  let surprise = orderly(v, [s0, s1]);
  if (!surprise && retries === 0 && v.spec.retry.maxAttempts > 1) surprise = flag(v.events.find((e) => e.slot === s0.slot && e.kind === 'failed'), 'no retry ran at all');
  return { outcome: worst([f0, f1]), verdict, endsWell: f0.good && f1.good, surprise };
}

function restart(v: VerdictInput): Verdict {
  const [s0] = v.script.focus as [SlotInfo];
  const f = fateOf(v, s0);
  let surprise: string | null = null;
  if (v.spec.retry.maxAttempts === 1 && !f.good) {
    surprise = flag(v.events.find((e) => e.slot === s0.slot && e.kind === 'failed'), 'with a single attempt, an agent whose process dies fails the slot: there is no retry');
  }
  surprise ??= orderly(v, [s0]);
  const refused = v.events.find((e) => e.kind === 'agent' && e.detail.includes('was refused'));
  if (!surprise && refused) surprise = flag(refused, `after the restart, ${refused.detail}`);
  const verdict = f.good && (f.outcome === 'ran_once' || f.outcome === 'ran_late') ? `${f.words}, after a lost attempt and a restart of Gaffer` : f.words;
  return { outcome: f.outcome, verdict, endsWell: f.good, surprise };
}

function crossDay(v: VerdictInput): Verdict {
  const slots = v.script.focus;
  const next = slots[slots.length - 1]!;
  const missed = slots.slice(0, -1);
  const fates = missed.map((s) => fateOf(v, s));
  const fn = fateOf(v, next);
  const all = [...fates, fn];
  let verdict: string;
  if (missed.length === 0) verdict = `nothing was due while Gaffer was down; ${next.slot}: ${fn.words}`;
  else if (missed.length === 1) verdict = `${fates[0]!.words}; then ${next.slot} ${fn.words}`;
  else {
    const count = (o: RehearsalOutcome[]) => fates.filter((f) => o.includes(f.outcome)).length;
    const made = count(['backfilled', 'folded', 'ran_late', 'ran_once']);
    const waiting = fates.filter((f) => f.good && (f.outcome === 'missed' || f.outcome === 'failed')).length;
    const lost = fates.filter((f) => !f.good).length;
    verdict = `${missed.length} slots missed: ${made} made up${waiting ? `, ${waiting} still queued for backfill` : ''}${lost ? `, ${lost} lost` : ''}; then ${next.slot} ${fn.words}`;
  }
  let surprise = orderly(v, missed.length > 1 ? [missed[0]!, next] : slots);
  const queued = fates.filter((f) => f.good && (f.outcome === 'missed' || f.outcome === 'failed')).length;
  if (!surprise && queued > 0) {
    surprise = flag(
      v.events.find((e) => e.kind === 'backfill' && e.detail.startsWith('backfill of')),
      `only ${v.spec.backfillCapPerTick} backfill${v.spec.backfillCapPerTick === 1 ? '' : 's'} run per new slot, oldest first: ${queued} missed slot${queued === 1 ? '' : 's'} still wait${queued === 1 ? 's' : ''} when the rehearsal ends`,
    );
  }
  if (!surprise) {
    const bf = v.events.find((e) => e.kind === 'backfill' && e.detail.startsWith('backfill of'));
    const first = firstDispatch(v, next.slot);
    if (bf && first && bf.ms <= first.ms) surprise = flag(first, `${next.slot} waits for the backfill of the missed slot to finish first, so it starts only at ${v.words.time(first.ms, next.at)}`);
  }
  const endsWell = all.every((f) => f.good);
  return { outcome: worst(all), verdict, endsWell, surprise };
}
