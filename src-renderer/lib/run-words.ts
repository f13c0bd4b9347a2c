/** A slot's disposition and a layer's verdict in words, with a status tone (lib/status.ts tones). */
import type { Backfill, LayerVerdict, LedgerEntry, Run, RunDisposition } from '../../src-main/common/job-schema';
import type { RouteLink } from './routes';

export type LedgerDisposition = LedgerEntry['disposition'];

/** A disposition in words, with a status tone (lib/status.ts tones). */
export const DISPOSITION_META: Record<LedgerDisposition, { label: string; tone: string }> = {
  waiting: { label: 'waiting', tone: 'ready' },
  dispatched: { label: 'dispatched', tone: 'progress' },
  running: { label: 'running', tone: 'progress' },
  verifying: { label: 'checking the work', tone: 'progress' },
  retry_scheduled: { label: 'retry scheduled', tone: 'blocked' },
  ran: { label: 'ran ok', tone: 'done' },
  already_done: { label: 'already done', tone: 'done' },
  skipped_calendar: { label: 'skipped: calendar', tone: 'cancelled' },
  skipped_dst: { label: 'skipped: DST', tone: 'cancelled' },
  skipped_overlap: { label: 'skipped: overlap', tone: 'blocked' },
  skipped_not_ready: { label: 'skipped: not ready', tone: 'blocked' },
  skipped_paused: { label: 'skipped: paused', tone: 'blocked' },
  skipped_kill_switch: { label: 'skipped: kill switch', tone: 'blocked' },
  skipped_disabled: { label: 'skipped: disabled', tone: 'cancelled' },
  skipped_maintenance: { label: 'skipped: maintenance', tone: 'blocked' },
  skipped_quota: { label: 'skipped: quota', tone: 'blocked' },
  skipped_budget: { label: 'skipped: spend cap', tone: 'blocked' },
  missed: { label: 'missed', tone: 'failed' },
  folded: { label: 'folded', tone: 'ready' },
  failed: { label: 'failed', tone: 'failed' },
  held: { label: 'held', tone: 'failed' },
  backfilled: { label: 'backfilled', tone: 'done' },
  rejected: { label: 'rejected', tone: 'cancelled' },
  scheduled: { label: 'scheduled', tone: 'backlog' },
  not_evaluated: { label: 'no run recorded', tone: 'failed' },
  before_job: { label: 'before the job existed', tone: 'cancelled' },
};

export function dispositionMeta(d: LedgerDisposition | RunDisposition): { label: string; tone: string } {
  return DISPOSITION_META[d] ?? { label: d, tone: 'neutral' };
}

/** A layer's verdict in words (Why and the run detail). */
export const LAYER_VERDICT_META: Record<LayerVerdict['verdict'], { label: string; tone: string }> = {
  ready: { label: 'pass', tone: 'done' },
  not_ready: { label: 'not ready', tone: 'blocked' },
  error: { label: 'error', tone: 'failed' },
  unknown: { label: 'not evaluated', tone: 'neutral' },
  will_check: { label: 'will check', tone: 'ready' },
};

/**
 * A run's error as the operator should read it: the error of a slot that went on to succeed (a
 * retry, a backfill) belongs to an earlier attempt, not to the outcome.
 */
export function runErrorView(r: Pick<Run, 'lastError' | 'disposition'>): { text: string; earlier: boolean; verification: boolean } | null {
  if (!r.lastError) return null;
  const checks = checksFailedWords(r.lastError);
  return { text: checks ?? r.lastError, earlier: r.disposition === 'ran' || r.disposition === 'backfilled', verification: checks !== null };
}

/** How Gaffer's checks word their failure (common/verify.ts `verificationError`). */
const VERIFICATION_FAILED = 'verification failed: ';

/**
 * An error written by "done when…" checks (the agent said done, Gaffer's own checks said no) in
 * plain words: "the agent said done, but the checks failed: tests: exited with 1"; null for any
 * other error.
 */
export function checksFailedWords(lastError: string | null): string | null {
  if (!lastError?.startsWith(VERIFICATION_FAILED)) return null;
  return `the agent said done, but the checks failed: ${lastError.slice(VERIFICATION_FAILED.length)}`;
}

/** "Open the run": the run's slot in its job's ledger (what a toast about a run offers). */
export function runLink(r: Pick<Run, 'jobId' | 'slot'>): RouteLink {
  return { label: 'Open the run', view: 'runs', param: r.jobId, query: { slot: r.slot } };
}

/** "you" for the operator's own actors (`operator:browser`, `operator:desktop`, …), else the actor. */
export function actorWords(by: string): string {
  return by === 'operator' || by.startsWith('operator:') ? 'you' : by;
}

/**
 * How a run that was run again ended, in words (the disposition `backfilled` alone reads like a
 * failed backfill next to the run's own status, which stays `failed`): approved by you, then
 * succeeded; retried, then succeeded; marked done by hand. Null for every other run.
 */
export function settledWords(run: Pick<Run, 'disposition' | 'status'>, backfills: ReadonlyArray<Pick<Backfill, 'status' | 'dispatchedAt' | 'approval' | 'actor' | 'reason'>>): string | null {
  if (run.disposition !== 'backfilled') return null;
  const done = [...backfills].reverse().find((b) => b.status === 'done');
  if (!done) return 'ran again later and succeeded';
  if (done.approval) return `approved by ${actorWords(done.approval.by)}, then succeeded`;
  if (!done.dispatchedAt) return 'marked done by hand';
  return done.reason === 'missed' || done.reason === 'not_ready' ? 'missed, then ran later and succeeded' : 'failed, then ran again and succeeded';
}

const BACKFILL_REASONS: Record<string, string> = {
  failed: 'it failed',
  missed: 'missed',
  not_ready: 'not ready in its window',
  operator: 'queued by hand',
  needs_human: 'needed a human',
  fatal: 'held after a fatal error',
  budget: 'held at its spend cap',
};

/** Why a slot is in the backfill queue, in words (`needs_human` → "needed a human"). */
export function backfillReasonWords(reason: string): string {
  return BACKFILL_REASONS[reason] ?? reason.replace(/_/g, ' ');
}
