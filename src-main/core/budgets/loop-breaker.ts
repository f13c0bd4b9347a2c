/**
 * The loop breaker (PROTOCOL §14): the same error, attempt after attempt, stops the retries and
 * asks the operator, instead of paying for the same failure all night.
 *
 * Invariants:
 * 1. Errors are compared normalised: ISO times, UUIDs, long hex ids and every run of digits are
 *    masked, case and spacing ignored — "rate limit, retry in 31 s" and "… 12 s" are the same error.
 * 2. One streak per subject (`task:<id>`, `run:<id>`; table `error_streaks`): an attempt ending with the same
 *    normalised error adds one, another error starts again at one, a success clears it. Written in
 *    the caller's transaction (the report's), so the streak and the status cannot disagree.
 * 3. When the streak reaches `sameErrorTimes` (default 3; 0 turns the breaker off) the retry is
 *    refused: the task is `blocked` instead of going back to the backlog (the run attempt `held`
 *    instead of retried), with a `loop_breaker` inbox item naming the error and how many times it came.
 * 4. `sameErrorTimes` is one setting for tasks and job runs (the jobs settings row, `PUT
 *    /job-settings/loop-breaker`), read at each failure; a job may set its own
 *    (`loopBreaker.sameErrorTimes`).
 */
import { DEFAULT_SAME_ERROR_TIMES } from '../../common/job-schema';
import { normaliseError } from '../../common/error-signature';
import type { CoreContext } from '../context';
import type { Inbox } from '../inbox';
import { prepareLoopBreakerStatements } from './store';

export { DEFAULT_SAME_ERROR_TIMES };

/** Invariant 1 (common/error-signature.ts). */
export { normaliseError };

export class LoopBreaker {
  private readonly q;
  /**
   * How many streaks `error_streaks` holds, exact within one store epoch (no rollback, no other
   * writer since): while there are none, a success has nothing to clear and skips its DELETE — a
   * statement on every `done` report, the hub's hot path (issue 32).
   */
  private streaks: { epoch: number; count: number } | undefined;

  constructor(
    private readonly ctx: Pick<CoreContext, 'db' | 'clock' | 'store'>,
    private readonly inbox: Inbox,
    /** The setting (invariant 4), read at each failure; absent: the default. */
    private readonly sameErrorTimes: () => number = () => DEFAULT_SAME_ERROR_TIMES,
  ) {
    this.q = prepareLoopBreakerStatements(ctx.db);
  }

  /** Invariant 2: an attempt of `subject` ended with `error` (null: it succeeded). Returns the streak. */
  note(subject: string, error: string | null): number {
    const known = this.knownStreaks();
    if (error === null) {
      if (known.count > 0) known.count -= this.q.clear.run(subject).changes;
      return 0;
    }
    const signature = normaliseError(error);
    const before = this.q.get.get(subject);
    const count = before && before.signature === signature ? before.count + 1 : 1;
    this.q.put.run(subject, signature, count, error.slice(0, 2000), this.ctx.clock.now());
    if (before === undefined) known.count++;
    return count;
  }

  /** The streak count of this epoch (read afresh after a rollback or another writer's commit). */
  private knownStreaks(): { epoch: number; count: number } {
    const epoch = this.ctx.store.epoch;
    const k = this.streaks;
    if (k !== undefined && k.epoch === epoch) return k;
    return (this.streaks = { epoch, count: this.q.count.get()! });
  }

  /**
   * A task's holder reported `status` with `note` (inside the report's transaction): the status the
   * task takes. A retryable report (`backlog`) whose error came `times` in a row is `blocked` instead
   * (invariant 3).
   */
  taskReported(task: { id: number; title: string; role: string; attempt: number }, status: string, note: string | null, times?: number): 'blocked' | null {
    const subject = `task:${task.id}`;
    if (status === 'done') {
      this.note(subject, null);
      return null;
    }
    if ((status !== 'backlog' && status !== 'failed') || !note?.trim()) return null;
    const streak = this.note(subject, note);
    if (status !== 'backlog' || (times ??= this.sameErrorTimes()) <= 0 || streak < times) return null; // the setting is read only here: a done report is the hub's hot path
    this.inbox.raise({
      key: `loop:${subject}:${task.attempt}`,
      kind: 'loop_breaker',
      subject,
      about: { taskId: task.id, title: task.title, role: task.role },
      entry: {
        title: `Task ${task.title} failed ${streak} times in a row with the same error`,
        detail: `“${note.trim().slice(0, 500)}”. Retries are stopped and the task is blocked: fix the cause, then unblock it (or cancel it).`,
        attempt: task.attempt,
        times: streak,
        error: note.slice(0, 2000),
      },
    });
    return 'blocked';
  }

  /**
   * A job run's attempt ended with a retryable `error` (the agent's, or its failed checks), inside
   * the write that records it: the streak when the retry is to be refused (invariant 3) — the
   * caller holds the run; the `loop_breaker` item is raised here — else 0.
   */
  runFailed(run: { id: string; jobId: string; job: string; slot: string; role: string; attempt: number }, error: string, times = this.sameErrorTimes()): number {
    const subject = `run:${run.id}`;
    if (!error.trim()) return 0;
    const streak = this.note(subject, error);
    if (times <= 0 || streak < times) return 0;
    this.inbox.raise({
      key: `loop:${subject}:${run.attempt}`,
      kind: 'loop_breaker',
      subject,
      about: { runId: run.id, jobId: run.jobId, job: run.job, slot: run.slot, role: run.role },
      entry: {
        title: `Job ${run.job} (${run.slot}) failed ${streak} times in a row with the same error`,
        detail: `“${error.trim().slice(0, 500)}”. Retries are stopped and the run is held: fix the cause, then approve it to run again (or reject it).`,
        attempt: run.attempt,
        times: streak,
        error: error.slice(0, 2000),
      },
    });
    return streak;
  }

  /** A job run's attempt succeeded (or the operator decided on it): its streak starts again. */
  runSucceeded(runId: string): void {
    this.note(`run:${runId}`, null);
  }
}
