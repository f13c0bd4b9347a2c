/**
 * Rehearsing a job (PROTOCOL §11): `POST /jobs/rehearse {spec, scenarios?}` runs the job's policies
 * through five scenarios on the real engine, against a throw-away database, and answers one
 * timeline, one slot ledger and one plain verdict per scenario. The field names of §11 (`name`,
 * `outcome`, `events: [{at, kind, detail}]`, `ledger: [{slot, disposition, attempts}]`) are fixed;
 * everything else here is an addition.
 */
import { z } from 'zod';
import type { BackfillStatus, RunDisposition, RunStatus } from './job-schema';

export const SCENARIO_NAMES = ['normal', 'data_delay', 'downstream_timeout', 'process_restart', 'cross_day_backfill', 'said_done_not_done'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

/** The scenarios in the editor's words. */
export const SCENARIO_TITLES: Record<ScenarioName, string> = {
  normal: 'Normal day',
  data_delay: 'Data delay',
  downstream_timeout: 'Downstream timeout',
  process_restart: 'Process restart',
  cross_day_backfill: 'Cross-day backfill',
  said_done_not_done: 'Said done, not done',
};

/**
 * Rehearsed by default only for a job with a "done when…" declaration (PROTOCOL §13), else only
 * when asked for: the agent says done, Gaffer's checks find the work not done.
 */
export const VERIFY_SCENARIO: ScenarioName = 'said_done_not_done';

/**
 * The body of `POST /jobs/rehearse` (and of the console's `jobs.rehearse`). `spec` is any object:
 * it is validated as for `POST /jobs`, and a spec with errors is refused with its issues.
 * `from` (an addition) is the instant the rehearsal starts looking for the job's next slot
 * (default: now), so a rehearsal can be repeated exactly.
 */
export const rehearseInput = z.strictObject({
  spec: z.record(z.string(), z.unknown()),
  scenarios: z.array(z.enum(SCENARIO_NAMES)).min(1).max(SCENARIO_NAMES.length).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
});
export type RehearseInput = z.infer<typeof rehearseInput>;

/** What kind of moment an event of a timeline is. */
export const REHEARSAL_EVENT_KINDS = [
  'trigger', // a slot came due (claimed)
  'check', // a verdict of a check changed (time, a precondition, the execution conditions)
  'wait', // re-checks that found the same thing
  'dispatch', // an attempt handed to the role's agents
  'start', // an agent accepted the attempt
  'step', // an agent reported a step done (a side effect recorded)
  'retry', // an attempt failed; a retry is scheduled
  'success',
  'failed',
  'missed', // the missed-window policy decided a slot that could not start
  'skipped', // calendar, DST, overlap, disabled
  'fold', // a missed slot folded into a later run
  'backfill', // queued, dispatched, done, failed
  'alert', // something the operator would be told
  'hold', // held for a human
  'approval', // a held run approved or rejected
  'agent', // the scripted agent: said hello, vanished, reconnected, was refused
  'gaffer', // Gaffer stopped or started (the scenario's downtime)
  'data', // the scripted upstream: data became ready
] as const;
export type RehearsalEventKind = (typeof REHEARSAL_EVENT_KINDS)[number];

export interface RehearsalEvent {
  at: string;
  kind: RehearsalEventKind;
  /** What happened, in plain words. */
  detail: string;
  slot?: string;
  attempt?: number;
  /** This is the moment the scenario's surprise is about. */
  surprise?: boolean;
}

export interface RehearsalLedgerEntry {
  slot: string;
  disposition: RunDisposition;
  /** Attempts of the slot, retries and backfills included. */
  attempts: number;
  status: RunStatus;
  /** The slot's backfill, if it has one. */
  backfill: BackfillStatus | null;
}

/** How the scenario ended, as one word (the verdict says it in a sentence). */
export const REHEARSAL_OUTCOMES = ['ran_once', 'ran_late', 'backfilled', 'folded', 'missed', 'failed', 'held', 'unfinished'] as const;
export type RehearsalOutcome = (typeof REHEARSAL_OUTCOMES)[number];

export interface RehearsalScenario {
  name: ScenarioName;
  title: string;
  /** What the scenario scripts (the upstream, the agent, Gaffer's downtime). */
  story: string;
  outcome: RehearsalOutcome;
  /** The plain verdict: "ran once", "ran late", "missed → backfilled the next day", "held for a human". */
  verdict: string;
  /** False when this policy combination makes the scenario end badly (a slot lost, failed or left waiting). */
  endsWell: boolean;
  /** What the operator would not expect, said plainly; null when nothing surprising happened. */
  surprise: string | null;
  events: RehearsalEvent[];
  ledger: RehearsalLedgerEntry[];
}

export interface RehearsalResult {
  job: string;
  timezone: string;
  /** Where the rehearsal started looking for the job's next slot. */
  from: string;
  /** Wall time the whole rehearsal took. */
  elapsedMs: number;
  scenarios: RehearsalScenario[];
}
