/**
 * A scenario's timeline: what the throw-away database's audit log recorded (as the engine wrote
 * it), plus the scenario's remarks and the re-checks that found nothing new, in plain words.
 *
 * Invariants:
 * 1. Every decision in the timeline is one the engine recorded (an audit row of the rehearsal's
 *    database); this module only says it in words. Rows that say nothing to an operator (the job's
 *    creation, a time check that passed) are left out.
 * 2. Events are in the order they happened; re-checks that repeat a verdict are one `wait` event
 *    placed at the last of them.
 */
import type { JobSpec } from '../../../common/job-schema';
import { MISSED_WINDOW_LABELS, quoted } from '../../../common/job-labels';
import type { RehearsalEvent } from '../../../common/rehearsal';
import type { FeedItem } from './sandbox';
import { STEP_WORDS } from './scenarios';
import type { Evaluation } from './scripted-checks';
import { duration, type ZoneWords } from './words';

/** A timeline event with what the verdict needs to find it again. */
export interface TimelineEvent extends RehearsalEvent {
  /** The audit type it came from (`run.retry`, …), `note`, or `wait`. */
  source: string;
  at: string;
  ms: number;
  runId?: string;
}

interface RunNotes {
  slot: string;
  claimedAt: number;
  /** Names of the checks whose last verdict blocks (precondition names, or the execution reason). */
  blocking: Map<string, string>;
}

export function buildTimeline(feed: readonly FeedItem[], evaluations: readonly Evaluation[], spec: JobSpec, recheckMs: number, words: ZoneWords): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const names = new Map<string, string>();
  const runs = new Map<string, RunNotes>();
  /** Who holds each run's attempt now (the last to accept it). */
  const holders = new Map<string, string>();
  const agent = (id: unknown) => names.get(String(id)) ?? String(id);
  const t = (ms: number, ref: number) => words.time(ms, ref);
  const recheck = duration(recheckMs);

  const push = (ms: number, e: Omit<TimelineEvent, 'at' | 'ms'>) => out.push({ at: new Date(ms).toISOString(), ms, ...e });

  for (const item of feed) {
    if (item.source === 'note') {
      push(item.at, { source: 'note', kind: item.kind, detail: item.detail, ...(item.slot ? { slot: item.slot } : {}), ...(item.attempt ? { attempt: item.attempt } : {}) });
      continue;
    }
    const d = item.detail;
    const slot = typeof d.slot === 'string' ? d.slot : undefined;
    const runId = item.subject.startsWith('run:') ? item.subject.slice(4) : typeof d.runId === 'string' ? d.runId : undefined;
    const attempt = typeof d.attempt === 'number' ? d.attempt : undefined;
    const base = { source: item.type, ...(slot ? { slot } : {}), ...(runId ? { runId } : {}), ...(attempt ? { attempt } : {}) };
    const ev = (kind: RehearsalEvent['kind'], detail: string) => push(item.at, { ...base, kind, detail });
    switch (item.type) {
      case 'instance.hello':
        names.set(item.subject.slice('instance:'.length), String(d.name));
        ev('agent', `${String(d.name)} says hello: one instance of the role is online`);
        break;
      case 'instance.resume':
        ev('agent', `${agent(item.subject.slice(9))} reconnects and resumes as the same instance`);
        break;
      case 'instance.disconnect':
        ev('agent', `${agent(item.subject.slice(9))} is disconnected (${String(d.why ?? 'its socket closed')}); it keeps what it holds for the reconnect grace`);
        break;
      case 'instance.offline':
        ev('agent', `${agent(item.subject.slice(9))} is offline: its reconnect grace is over`);
        break;
      case 'run.claim': {
        runs.set(runId!, { slot: slot!, claimedAt: item.at, blocking: new Map() });
        const local = typeof d.local === 'string' ? d.local.replace('T', ' ') : slot;
        ev('trigger', d.trigger === 'catch_up' ? `slot ${slot} (due ${local}) is looked at late, still within its tolerance: it may run now` : `slot ${slot} comes due (${local}, ${words.zone})`);
        break;
      }
      case 'check.verdict': {
        const r = runs.get(runId!);
        const name = String(d.name);
        const blocks = d.verdict !== 'ready';
        if (r) {
          if (blocks) r.blocking.set(name, String(d.reason));
          else r.blocking.delete(name);
        }
        // The time layer is told by the claim and by the missed-window decision.
        if (d.layer === 'time') break;
        const reason = String(d.reason).replace(/ \(rehearsal\)$/, '');
        ev('check', d.layer === 'precondition' ? `check ${name} of ${slot}: ${reason}` : blocks ? `not dispatched yet: ${reason}` : 'every execution condition passes');
        break;
      }
      case 'run.dispatch': {
        const covers = Array.isArray(d.covers) && d.covers.length ? `; it also covers ${(d.covers as string[]).join(', ')} (folded)` : '';
        const what = d.kind === 'retry' ? `retry: attempt ${attempt} sent` : d.kind === 'redispatch' ? `attempt ${attempt} offered again` : `attempt ${attempt} sent`;
        ev('dispatch', `${what} to the ${String(d.role)} agents (deadline ${typeof d.deadline === 'string' ? t(Date.parse(d.deadline), item.at) : '?'})${covers}`);
        break;
      }
      case 'run.start':
      case 'run.attempt_start':
        holders.set(runId!, String(d.instanceId));
        ev('start', `${agent(d.instanceId)} accepts attempt ${attempt}`);
        break;
      case 'run.step':
        ev('step', `${agent(holders.get(runId!))}: step “${String(d.step)}” done — ${STEP_WORDS[String(d.step)] ?? 'recorded'}`);
        break;
      case 'run.retry':
        ev('retry', `attempt ${attempt} failed (${String(d.errorClass)}: ${shortError(d.error)}); retry ${String(d.retry)} of ${String(d.maxRetry)} at ${t(Date.parse(String(d.at)), item.at)}`);
        break;
      case 'run.succeed':
        ev('success', `slot ${slot} succeeded on attempt ${attempt ?? '?'}`);
        break;
      case 'run.fail':
      case 'run.skip':
        closed(item, d, runs.get(runId!), (kind, detail) => ev(kind, detail), spec, words);
        break;
      case 'run.alert':
        ev('alert', `the operator is alerted: ${alertWords(String(d.kind), slot)}`);
        break;
      case 'run.needs_human':
        ev('hold', `a human is notified at once: ${shortError(d.error)}`);
        break;
      case 'run.covered':
        ev('fold', `slot ${slot} is covered by the run of ${String(d.bySlot)}`);
        break;
      case 'run.backfilled':
        ev('backfill', d.bySlot ? `slot ${slot} counts as done: the run of ${String(d.bySlot)} that covered it succeeded` : `slot ${slot} counts as done: its backfill succeeded`);
        break;
      case 'backfill.enqueue':
        if (d.status === 'held') ev('hold', `slot ${slot} is held for review: nothing runs it until a human decides`);
        else ev('backfill', `slot ${slot} goes to the backfill queue (${String(d.reason)}): it runs when a later slot opens, oldest first, at most ${spec.backfillCapPerTick} per slot`);
        break;
      case 'backfill.dispatch':
        ev('backfill', `backfill of ${slot} sent (attempt ${attempt}), before the new slot`);
        break;
      case 'backfill.start':
        holders.set(runId!, String(d.instanceId));
        ev('start', `${agent(d.instanceId)} accepts the backfill of ${slot}`);
        break;
      case 'backfill.done':
        ev('backfill', `backfill of ${slot} succeeded`);
        break;
      case 'backfill.requeue':
        ev('backfill', `backfill of ${slot} failed (${String(d.errorClass)}: ${shortError(d.error)}); queued again`);
        break;
      case 'backfill.fail':
        ev('failed', `backfill of ${slot} failed for good (${String(d.errorClass)}: ${shortError(d.error)})`);
        break;
      case 'backfill.not_ready':
        ev('wait', `backfill of ${slot} not ready yet: ${(Array.isArray(d.reasons) ? (d.reasons as string[]) : []).join('; ').replace(/ \(rehearsal\)/g, '')}`);
        break;
      default:
        if (item.type.startsWith('run.approv') || item.type.startsWith('run.reject')) ev('approval', `${item.type.slice(4).replace('_', ' ')}: ${shortError(d.note ?? d.reason ?? '')}`);
        break;
    }
  }
  out.push(...waits(evaluations, recheck, words));
  // A slot the calendar skips is one event: its skip (the claim at the same instant says nothing more).
  const skippedAt = new Set(out.filter((e) => e.kind === 'skipped').map((e) => `${e.slot}@${e.ms}`));
  for (let i = out.length - 1; i >= 0; i--) if (out[i]!.kind === 'trigger' && skippedAt.has(`${out[i]!.slot}@${out[i]!.ms}`)) out.splice(i, 1);
  // Stable by time: a wait (the last of its re-checks) goes before what happened at the same instant.
  const sorted = out
    .map((e, i) => ({ e, i: e.source === 'wait' ? -1 : i }))
    .sort((a, b) => a.e.ms - b.e.ms || a.i - b.i)
    .map((x) => x.e);
  // Ids in the engine's words (a lost attempt's error, a refusal) read as the agents' names and the runs' slots.
  for (const e of sorted) {
    for (const [id, name] of names) if (e.detail.includes(id)) e.detail = e.detail.split(`instance ${id}`).join(name).split(id).join(name);
    for (const [id, run] of runs) if (e.detail.includes(id)) e.detail = e.detail.split(`run ${id}`).join(`the run of ${run.slot}`).split(id).join(`the run of ${run.slot}`);
  }
  return collapseBursts(sorted);
}

/** More of one kind at one instant than this (many slots decided at a start-up) is told once. */
const BURST = 4;

/**
 * Many slots decided at one instant (Gaffer starting after a long downtime of a frequent job) read
 * as the first of each kind and one line for the rest.
 */
function collapseBursts(events: TimelineEvent[]): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  for (let i = 0; i < events.length; ) {
    let j = i;
    while (j < events.length && events[j]!.ms === events[i]!.ms) j++;
    const group = events.slice(i, j);
    const byKind = new Map<string, TimelineEvent[]>();
    for (const e of group) {
      if (!e.slot) continue;
      // The same thing said of another slot.
      const key = `${e.kind}/${e.source}/${e.detail.split(e.slot).join('·')}`;
      byKind.set(key, [...(byKind.get(key) ?? []), e]);
    }
    const dropped = new Set<TimelineEvent>();
    const summaries = new Map<TimelineEvent, TimelineEvent>();
    for (const list of byKind.values()) {
      if (list.length <= BURST) continue;
      const [first, ...rest] = list as [TimelineEvent, ...TimelineEvent[]];
      for (const e of rest) dropped.add(e);
      summaries.set(first, { source: 'burst', kind: first.kind, at: first.at, ms: first.ms, detail: `… and ${rest.length} more slots the same way (${rest[0]!.slot} to ${rest[rest.length - 1]!.slot})` });
    }
    for (const e of group) {
      if (dropped.has(e)) continue;
      out.push(e);
      const sum = summaries.get(e);
      if (sum) out.push(sum);
    }
    i = j;
  }
  return out;
}

/** A run reached failed or skipped: in words, with what the missed-window policy does next. */
function closed(item: FeedItem & { source: 'audit' }, d: Record<string, unknown>, run: RunNotes | undefined, ev: (kind: RehearsalEvent['kind'], detail: string) => void, spec: JobSpec, words: ZoneWords): void {
  const slot = String(d.slot);
  const disposition = String(d.disposition);
  const policy = quoted(MISSED_WINDOW_LABELS[spec.missedWindow]);
  if (disposition === 'skipped_calendar') return ev('skipped', `slot ${slot} is skipped: ${String(d.reason ?? 'not a workday')}`);
  if (disposition === 'skipped_dst') return ev('skipped', `slot ${slot} is skipped: its local time does not exist (daylight saving time)`);
  if (disposition === 'skipped_overlap') return ev('skipped', `slot ${slot} is skipped: the previous run is still going (overlap: skip)`);
  if (disposition === 'held') return ev('hold', `slot ${slot} failed (${String(d.errorClass)}: ${shortError(d.error)}) and is held for a human`);
  if (d.errorClass !== undefined) {
    // Retries are over (or the next one would not fit): the run failed.
    const reason = String(d.error ?? '');
    const noRoom = /after the window closes|window closed before the retry/.test(reason);
    const next = disposition === 'folded' ? 'it is folded: the next run covers it' : spec.missedWindow === 'run_now' ? 'it goes to the backfill queue' : 'nothing makes it up';
    return ev('failed', `slot ${slot} failed (${String(d.errorClass)}${noRoom ? '' : `: ${shortError(reason)}`})${noRoom ? ': the next retry would start after the window closes' : ''}; under ${policy} ${next}`);
  }
  // The missed-window policy decided a slot that could not start.
  const firstLook = run !== undefined && run.claimedAt === item.at;
  const waited = run ? [...run.blocking.keys()] : [];
  const why = firstLook
    ? /after its window closed/.test(String(d.reason)) ? 'it is due after its own window closed' : 'Gaffer was not running while its window was open'
    : waited.length
      ? `its window closed at ${words.time(item.at)} while it waited for ${waited.map((n) => (n === 'execution' ? 'the execution conditions' : n)).join(', ')}`
      : `its window closed at ${words.time(item.at)}`;
  const next = disposition === 'folded' ? 'it is folded: the next run covers it' : spec.missedWindow === 'run_now' ? 'it goes to the backfill queue' : 'it is skipped with an alert; nothing makes it up';
  ev(disposition === 'folded' ? 'fold' : 'missed', `slot ${slot} missed: ${why}; under ${policy} ${next}`);
}

function alertWords(kind: string, slot: string | undefined): string {
  switch (kind) {
    case 'missed':
      return `slot ${slot} was missed`;
    case 'not_ready':
      return `slot ${slot} was never ready`;
    case 'failed':
      return `slot ${slot} failed`;
    case 'held':
      return `slot ${slot} is held`;
    default:
      return `slot ${slot} needs a human`;
  }
}

function shortError(e: unknown): string {
  const s = String(e ?? '');
  const cut = s.indexOf('; ');
  return cut > 0 ? s.slice(0, cut) : s;
}

/** Re-checks that repeat a not-ready verdict: one `wait` per stretch of two or more. */
function waits(evaluations: readonly Evaluation[], recheck: string, words: ZoneWords): TimelineEvent[] {
  const out: TimelineEvent[] = [];
  const stretches = new Map<string, Evaluation[]>();
  const flush = (key: string) => {
    const s = stretches.get(key);
    stretches.delete(key);
    if (!s || s.length < 2) return;
    const last = s[s.length - 1]!;
    out.push({
      source: 'wait',
      kind: 'wait',
      at: new Date(last.at).toISOString(),
      ms: last.at,
      slot: last.slot,
      detail: `${last.name} still not ready: checked ${s.length} times since ${words.time(s[0]!.at, last.at)} (every ${recheck})`,
    });
  };
  for (const e of evaluations) {
    const key = `${e.slot}\u0000${e.name}`;
    if (e.ready) flush(key);
    else stretches.set(key, [...(stretches.get(key) ?? []), e]);
  }
  for (const key of [...stretches.keys()]) flush(key);
  return out;
}
