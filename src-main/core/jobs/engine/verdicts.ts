/**
 * The engine's verdicts as pure functions of facts: layer 3 (may this attempt go now?), the hard
 * stops that come before the preconditions, and what a slot becomes when its window closes. The
 * facts are gathered by facts.ts; nothing here reads the database, the hub or the clock.
 *
 * Invariants:
 * 1. The execution conditions are checked in one order — kill switch, pause, maintenance, ordering,
 *    overlap, role quota, global quota, daily spend cap, the job's attempts a day, an online instance — and the first that
 *    fails is the blocker; every condition is still written into the evidence.
 * 2. A run by hand ignores pause, maintenance, the quotas and the spend caps; ordering and overlap
 *    apply only to a slot's first attempt. A draining pause lets a run already started (a retry)
 *    go on; only new slots wait.
 * 3. Overlap is a wait only under `queue_one` (one slot queued behind the running one); otherwise
 *    a busy slot is skipped at once (`skip_overlap`).
 */
import { isoTime } from '../../../common/iso-time';
import type { JobSettings, JobSpec, MissedWindowPolicy, RunStatus } from '../../../common/job-schema';
import { missedOutcome, type MissedOutcome } from '../plan';
import type { ExecutionBlocker, WaitingOn } from '../run-phase';
import type { JobRow } from '../rows';
import { maintenanceAt } from './maintenance';

/** What evaluates layer 3: a slot's first attempt, a retry, a run by hand, a backfill. */
export type ExecutionMode = 'slot' | 'retry' | 'manual' | 'backfill';

export interface ExecutionFacts {
  mode: ExecutionMode;
  now: number;
  settings: JobSettings;
  job: Pick<JobRow, 'paused_at' | 'paused_by' | 'paused_reason' | 'paused_until' | 'pause_drain' | 'pause_scope' | 'role'>;
  spec: JobSpec;
  /** Mode `slot`: what must finish first (backfills, catch-ups of older slots, slots due at the same instant). */
  before?: string[];
  /** Mode `slot`: other runs of the job in progress (catch-ups and same-instant slots aside). */
  inProgress?: Array<{ slot: string; status: RunStatus }>;
  /** Mode `slot`: older slots of the job still waiting for their first attempt. */
  waitingBefore?: string[];
  /** Attempts in flight of the job's role (when the role has a quota and the mode obeys it). */
  roleInFlight?: number;
  /** Attempts in flight of every job (when a global quota is set and the mode obeys it). */
  globalInFlight?: number;
  /** The daily spend caps covering the job's role (when caps are set and the mode obeys them): core/budgets' verdict. */
  budget?: { ok: boolean; reason: string; evidence: Record<string, unknown> };
  /** The job's attempts today against its ceiling (when it has one and the mode obeys it). */
  attemptsToday?: { n: number; limit: number; day: string; zone: string; nextDayAt: number };
  /** Online instances of the job's role that take job runs. */
  online: number;
  /** Online instances of the job's role whose `hello` said they take no runs (never offered one). */
  onlineNoRuns: number;
}

/** The verdict of layer 3 for one evaluation. */
export interface ExecVerdict {
  action: 'dispatch' | 'wait' | 'skip_overlap';
  blocker: ExecutionBlocker | null;
  reason: string;
  waitUntil?: number;
  evidence: Record<string, unknown>;
}

export function executionVerdict(f: ExecutionFacts): ExecVerdict {
  const { mode, job, spec, settings } = f;
  const ev: Record<string, unknown> = {};
  let first: { name: ExecutionBlocker; reason: string; waitUntil?: number; skip: boolean } | null = null;
  const note = (name: ExecutionBlocker, ok: boolean, reason: string, extra: Record<string, unknown> = {}, waitUntil?: number, skip = false) => {
    ev[name] = { verdict: ok ? 'ready' : 'not_ready', reason, ...extra };
    if (!ok && !first) first = { name, reason, ...(waitUntil !== undefined ? { waitUntil } : {}), skip };
  };
  const ks = settings.killSwitch;
  note('killSwitch', !ks.on, ks.on ? `the kill switch is on (by ${ks.by}: ${ks.reason})` : 'the kill switch is off');
  if (mode === 'manual') {
    ev.pause = { verdict: 'ready', reason: job.paused_at !== null ? 'the job is paused, but a run by hand is allowed' : 'the job is not paused' };
  } else {
    const draining = job.paused_at !== null && job.pause_drain === 1 && mode === 'retry';
    const paused = job.paused_at !== null && !draining;
    note(
      'pause',
      !paused,
      paused ? `the job is paused (${pauseWords(job)})` : draining ? `the job is paused (${pauseWords(job)}), but it lets this run, already started, finish` : 'the job is not paused',
    );
  }
  const mw = mode === 'manual' ? null : maintenanceAt(spec, f.now);
  note('maintenance', mw === null, mw === null ? 'no maintenance window now' : `inside maintenance window ${mw.label} until ${isoTime(mw.until)}`, {}, mw?.until);

  if (mode === 'slot') {
    const before = f.before ?? [];
    note('order', before.length === 0, before.length === 0 ? 'no backfill or catch-up of an older slot is in progress' : `waiting for ${before.join(', ')} to finish first`, { before });
    const busy = f.inProgress ?? [];
    const inProgress = busy.map((b) => b.slot);
    if (busy.length === 0 || spec.overlap === 'allow') {
      note('overlap', true, busy.length === 0 ? 'no other run of this job is in progress' : `overlap 'allow': runs alongside ${inProgress.join(', ')}`, { inProgress });
    } else if (spec.overlap === 'skip') {
      note('overlap', false, `the run of ${busy[0]!.slot} is still ${busy[0]!.status}; overlap 'skip'`, { inProgress, policy: 'skip' }, undefined, true);
    } else {
      const queued = f.waitingBefore ?? [];
      if (queued.length > 0) {
        note('overlap', false, `the run of ${busy[0]!.slot} is still ${busy[0]!.status} and ${queued[0]!} already waits behind it; overlap 'queue_one' keeps one`, { inProgress, queued, policy: 'queue_one' }, undefined, true);
      } else {
        note('overlap', false, `queued behind the run of ${busy[0]!.slot} (overlap 'queue_one')`, { inProgress, policy: 'queue_one', queuedBehind: true });
      }
    }
  }
  if (mode !== 'manual') {
    const max = spec.executionConditions.maxConcurrentPerRole;
    if (max !== undefined && f.roleInFlight !== undefined) {
      note('quotaRole', f.roleInFlight < max, `${f.roleInFlight} of ${max} runs of role ${job.role} in flight`, { inFlight: f.roleInFlight, limit: max });
    }
    const g = settings.globalConcurrency;
    if (g !== null && f.globalInFlight !== undefined) {
      note('quotaGlobal', f.globalInFlight < g, `${f.globalInFlight} of ${g} job runs in flight (global quota)`, { inFlight: f.globalInFlight, limit: g });
    }
  }
  if (f.budget) note('budget', f.budget.ok, f.budget.reason, f.budget.evidence);
  const a = f.attemptsToday;
  if (a) {
    const ok = a.n < a.limit;
    note('attemptCeiling', ok, ceilingWords(a), { attempts: a.n, limit: a.limit, day: a.day, ...(ok ? {} : { resumesAt: isoTime(a.nextDayAt) }) }, ok ? undefined : a.nextDayAt);
  }
  note('instance', f.online > 0, instanceWords(job.role, f.online, f.onlineNoRuns), { online: f.online, ...(f.onlineNoRuns > 0 ? { onlineNoRuns: f.onlineNoRuns } : {}) });
  const blocked = first as { name: ExecutionBlocker; reason: string; waitUntil?: number; skip: boolean } | null;
  if (!blocked) return { action: 'dispatch', blocker: null, reason: 'all execution conditions pass', evidence: ev };
  return { action: blocked.skip ? 'skip_overlap' : 'wait', blocker: blocked.name, reason: blocked.reason, ...(blocked.waitUntil !== undefined ? { waitUntil: blocked.waitUntil } : {}), evidence: ev };
}

/** The job's ceiling of attempts a day in words ("why didn't it run?"). */
export function ceilingWords(a: { n: number; limit: number; day: string; zone: string; nextDayAt: number }): string {
  if (a.n < a.limit) return `${a.n} of ${a.limit} attempts a day used on ${a.day}`;
  return `the job's ceiling of ${a.limit} attempt${a.limit === 1 ? '' : 's'} a day is reached (${a.n} on ${a.day}, ${a.zone}); no further attempt until ${isoTime(a.nextDayAt)}`;
}

/**
 * The words for who of `role` a run can be offered to: `takers` online instances that take runs,
 * `noRuns` more whose `hello` said they take none (an MCP session without --jobs, say).
 */
export function instanceWords(role: string, takers: number, noRuns: number): string {
  const others = noRuns > 0 ? `; ${noRuns} more online take${noRuns === 1 ? 's' : ''} no job runs (hello takesRuns: false)` : '';
  if (takers > 0) return `${takers} instance(s) of role ${role} online${others}`;
  if (noRuns > 0) return `no online instance of role ${role} takes job runs: ${noRuns} online said takesRuns: false (e.g. gaffer mcp without --jobs)`;
  return `no online instance of role ${role}`;
}

/** A stop that holds a slot before its preconditions are probed (nothing is dispatched while it lasts). */
export interface HardStop {
  name: 'killSwitch' | 'pause' | 'enabled';
  reason: string;
  evidence: Record<string, unknown>;
}

export function hardStop(settings: JobSettings, job: Pick<JobRow, 'enabled' | 'paused_at' | 'paused_by' | 'paused_reason' | 'paused_until' | 'pause_scope' | 'role'>): HardStop | null {
  const ks = settings.killSwitch;
  if (ks.on) return { name: 'killSwitch', reason: `the kill switch is on (by ${ks.by} at ${ks.at}: ${ks.reason})`, evidence: { ...ks } };
  if (job.paused_at !== null) {
    const at = isoTime(job.paused_at);
    const until = job.paused_until === null ? null : isoTime(job.paused_until);
    return { name: 'pause', reason: `the job is paused (${pauseWords(job)})`, evidence: { by: job.paused_by, at, reason: job.paused_reason, until, role: job.pause_scope === 'role' ? job.role : null } };
  }
  if (job.enabled !== 1) return { name: 'enabled', reason: 'the job is disabled', evidence: {} };
  return null;
}

/** The words a closing window quotes: the preconditions not ready, and the last execution verdict. */
export interface WindowCloseWords {
  /** `name: reason` of every precondition whose last verdict is not ready. */
  preconditions: string[];
  /** The reason of the last execution verdict, if one was recorded. */
  execution: string | undefined;
  /** When the window closed (ISO). */
  closedAt: string;
}

/**
 * The slot can no longer start: what it waited for last decides what it becomes. Waiting on an
 * operator's stop (pause, kill switch, disabled) is a skip of that kind and never caught up; not
 * ready / quota / maintenance is "not ready" by the missed-window policy; anything else is missed.
 */
export function windowCloseOutcome(waitingOn: WaitingOn | null, words: WindowCloseWords, policy: MissedWindowPolicy): MissedOutcome {
  const blocker = waitingOn === null || waitingOn === 'window' ? 'unknown' : waitingOn;
  const close = words.closedAt;
  if (blocker === 'pause' || blocker === 'killSwitch' || blocker === 'enabled') {
    const disposition = blocker === 'pause' ? 'skipped_paused' : blocker === 'killSwitch' ? 'skipped_kill_switch' : 'skipped_disabled';
    return { status: 'skipped', disposition, backfill: false, alert: false, reason: `${words.execution ?? blocker} until the window closed at ${close}` };
  }
  const why =
    blocker === 'preconditions'
      ? `not ready when the window closed at ${close}: ${words.preconditions.join('; ')}`
      : `${words.execution ?? 'not dispatched'} when the window closed at ${close}`;
  const notReady = blocker === 'preconditions' || blocker === 'maintenance' || blocker === 'quotaRole' || blocker === 'quotaGlobal' || blocker === 'budget' || blocker === 'attemptCeiling';
  const outcome = missedOutcome(policy, why, notReady);
  if (notReady && outcome.disposition === 'missed') {
    const disposition = blocker === 'preconditions' ? 'skipped_not_ready' : blocker === 'maintenance' ? 'skipped_maintenance' : blocker === 'budget' ? 'skipped_budget' : 'skipped_quota';
    return { ...outcome, status: 'skipped', disposition };
  }
  return outcome;
}

/** Who paused the job, when, why and until when, in words (the runner's and the explainer's reasons). */
export function pauseWords(job: Pick<JobRow, 'paused_at' | 'paused_by' | 'paused_reason' | 'paused_until' | 'pause_scope' | 'role'>): string {
  const at = job.paused_at === null ? '?' : isoTime(job.paused_at);
  const scope = job.pause_scope === 'role' ? `with its role ${job.role}, ` : '';
  const until = job.paused_until === null ? '' : `; until ${isoTime(job.paused_until)}`;
  return `${scope}by ${job.paused_by} at ${at}: ${job.paused_reason}${until}`;
}
