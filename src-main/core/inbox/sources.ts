/**
 * Inbox items raised from the core's typed events, at once: held runs (needs a human, fatal),
 * blocked tasks (acknowledged by themselves once the task is unblocked or cancelled), missed and
 * alert-skipped slots, a run that failed for good, a failed task, repeated failures of a job, an
 * instance lost while holding locks, a crash-looping managed agent. And resolved by their causes
 * (PROTOCOL §12): the job's next run succeeded or the slots were backfilled, the task left
 * `failed`, the agent runs again, the instance came back. Each occurrence has a key derived from the rows alone, so `reconcile` (at start)
 * can raise from the database what a crash between a commit and its event left unraised, and
 * nothing is ever raised twice (inbox.ts invariant 1).
 *
 * Listeners run after the commit of the change (store.ts invariant 3), each in its own write; a
 * failing one is logged and leaves the next start's reconcile to catch up.
 */
import { BUDGET_ACTOR, VERIFY_ACTOR, type InboxKind } from '../../common/attention';
import type { Logger } from '../../common/logger';
import { LOOP_BREAKER_PREFIX, type Run } from '../../common/job-schema';
import type { Task } from '../../common/model';
import type { InboxItem } from '../../common/attention';
import type { CoreContext } from '../context';
import type { CoreEventOf, Disposable } from '../events';
import type { Inbox, Occurrence } from './inbox';
import type { Facts } from './words';
import { prepareSourceStatements } from './store';

/** The job's items a success settles (when each of their slots is behind it). */
const JOB_FAILURE_KINDS: readonly InboxKind[] = ['run_failed', 'repeated_failures', 'missed', 'dead_man'];

/** A job failing this many runs in a row raises `repeated_failures`. */
export const REPEATED_FAILURES = 3;
/** Largest agent output kept in an item's evidence (JSON characters); longer ones are cut. */
const MAX_OUTPUT_CHARS = 4000;
/** Gaps remembered to tell "missed while asleep" from "missed while not running". */
const GAPS_KEPT = 16;

/** The agent's output, bounded (the run or task keeps the whole of it). */
export function boundedOutput(output: unknown): unknown {
  if (output === null || output === undefined) return null;
  const text = typeof output === 'string' ? output : JSON.stringify(output);
  if (text.length <= MAX_OUTPUT_CHARS) return output;
  return `${text.slice(0, MAX_OUTPUT_CHARS)}… (${text.length} characters; the whole output is on the run)`;
}

export class InboxSources {
  private readonly listeners: Disposable[] = [];
  /** Recent sleeps and stalls [from, to] (wall time of the old and the new timeline). */
  private readonly gaps: Array<{ from: number; to: number }> = [];
  /** Missed-slot alerts waiting for their one transaction (`later`). */
  private readonly queued: Array<() => void> = [];
  private readonly q;

  constructor(
    private readonly ctx: CoreContext,
    private readonly inbox: Inbox,
    private readonly logger: Logger,
  ) {
    this.q = prepareSourceStatements(ctx.db);
  }

  start(): void {
    const ev = this.ctx.events;
    this.listeners.push(
      ev.on('run.needs_human', (e) => this.guard('needs_human', () => this.runHeld('needs_human', e.run, e.message))),
      ev.on('run.alert', (e) => {
        const alert = () => this.guard('run alert', () => this.runAlert(e));
        if (e.kind === 'missed' || e.kind === 'not_ready') this.later(alert);
        else alert();
      }),
      ev.on('run.finished', (e) => {
        if (e.run.status === 'failed' && e.run.attempt > 0 && e.run.disposition !== 'missed') this.guard('repeated failures', () => this.failures(e.run.jobId));
        if (e.run.status === 'success') this.guard('run succeeded', () => this.jobRecovered(e.run, `its run of ${e.run.slot} succeeded`));
      }),
      ev.on('run.updated', (e) => {
        if (e.what === 'run.backfilled') this.guard('slot backfilled', () => this.jobRecovered(e.run, `${e.run.slot} was backfilled`));
      }),
      ev.on('task.changed', (e) => {
        // A task blocked by its spend cap is the budget item of core/budgets, not a second one.
        if (e.to === 'blocked' && e.from !== 'blocked') {
          // A spend cap and failed checks raise their own kinds (budget, verify_failed).
          if (e.actor !== BUDGET_ACTOR && e.actor !== VERIFY_ACTOR) this.guard('blocked task', () => this.taskBlocked(e.task, e.actor));
        }
        // Unblocked or cancelled: the operator decided, and the item about the block is done.
        else if (e.from === 'blocked' && e.to !== 'blocked') this.guard('decided task', () => this.inbox.resolveSubject(`task:${e.task.id}`, e.actor, `${e.to === 'cancelled' ? 'cancelled' : 'unblocked'} by ${e.actor}`, e.to === 'cancelled' ? 'cancelled' : 'unblocked'));
        if (e.to === 'failed' && e.from !== 'failed') this.guard('failed task', () => this.taskFailed(e.task, e.actor));
        else if (e.from === 'failed' && e.to !== 'failed') this.guard('task moved on', () => this.inbox.resolve('task_failed', `task:${e.task.id}`, `the task moved on to ${e.to} (${e.actor})`));
      }),
      ev.on('instance.changed', (e) => {
        if (e.instance.status === 'offline') this.guard('instance lost', () => this.instanceLost(e.instance.id));
        else if (e.instance.status === 'online') {
          this.guard('instance back', () => this.inbox.resolve('instance_lost', `instance:${e.instance.id}`, `${e.instance.name} is online again`));
          this.guard('queue served', () => this.inbox.resolve('stuck_queue', `role:${e.instance.role}`, `${e.instance.name}, an instance of role ${e.instance.role}, is online`));
        }
      }),
      ev.on('managed.changed', (e) => this.guard('managed agent', () => this.managedChanged(e))),
      ev.on('webhook.delivery', (e) => this.guard('webhook delivery', () => this.webhookDelivery(e))),
      ev.on('clock.jumped', (e) => {
        if (e.gapMs <= 0) return;
        this.gaps.push({ from: e.from, to: e.to });
        if (this.gaps.length > GAPS_KEPT) this.gaps.shift();
      }),
    );
  }

  stop(): void {
    for (const l of this.listeners.splice(0)) l.dispose();
    this.queued.length = 0; // stopping: what is left is reconciled at the next start
  }

  /**
   * Missed-slot alerts are raised in their order in ONE transaction once the code that emitted
   * them is done (a microtask later): a wake-up's catch-up decides up to ONE_BY_ONE missed slots
   * of a job in one commit, and an item raised or folded per slot in a write of its own was a
   * durable commit each, back to back on the event loop — agents' claims waited seconds (issue
   * 32). A crash before it commits is what `reconcile` covers at the next start.
   */
  private later(fn: () => void): void {
    this.queued.push(fn);
    if (this.queued.length === 1) queueMicrotask(() => this.drain());
  }

  private drain(): void {
    const batch = this.queued.splice(0);
    if (batch.length === 0) return;
    // Each raise in a savepoint of its own (Inbox.raise writes): one that fails leaves the others.
    this.guard('missed slots', () => this.ctx.store.write(() => batch.forEach((fn) => fn())));
  }

  private guard(what: string, fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.logger.error(`inbox: could not raise an item (${what}); the next start raises it from the database`, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  private raise(kind: InboxKind, key: string, subject: string, about: Facts, entry: Facts): void {
    const occ: Occurrence = { key, kind, subject, about, entry };
    this.inbox.raise(occ);
  }

  // ---- held runs ------------------------------------------------------------------------------

  private runHeld(kind: 'needs_human' | 'held', run: Pick<Run, 'id' | 'jobId' | 'job' | 'slot' | 'attempt' | 'output' | 'errorClass'>, message: string): void {
    this.raise(kind, `hold:run:${run.id}:${run.attempt}`, `run:${run.id}`, { runId: run.id, jobId: run.jobId, job: run.job, slot: run.slot }, {
      attempt: run.attempt,
      error: message,
      errorClass: run.errorClass,
      output: boundedOutput(run.output),
    });
  }

  private runAlert(e: CoreEventOf<'run.alert'>): void {
    if (e.kind === 'held') {
      // A run held for its spend cap is the budget item of core/budgets, one held by the loop
      // breaker its loop_breaker item (core/budgets/loop-breaker.ts): not a second one.
      if (e.run.errorClass !== 'budget' && !e.message.startsWith(LOOP_BREAKER_PREFIX)) this.runHeld('held', e.run, e.message);
      return;
    }
    if (e.kind === 'failed') {
      this.runFailed(e.run, e.message);
      return;
    }
    if (e.kind === 'attempt_ceiling') {
      // PROTOCOL §14: a job's ceiling of attempts a day; one item per job, each refused attempt folded in.
      this.raise('quota', `ceiling:${e.run.id}:${e.run.attempt}`, `job:${e.run.jobId}`, { jobId: e.run.jobId, job: e.run.job }, {
        title: `Job ${e.run.job} used up its attempts for the day`,
        detail: `${e.message}. Raise or remove the job's “attempts a day” if it should go on today.`,
        runId: e.run.id,
        slot: e.run.slot,
      });
      return;
    }
    if (e.kind !== 'missed' && e.kind !== 'not_ready') return; // needs_human has its own event
    const job = this.q.jobPolicy.get(e.run.jobId);
    // run_now queues a missed slot for backfill; skip_and_alert skips it and says so.
    const kind: InboxKind = job?.policy === 'run_now' ? 'missed' : 'skipped_alert';
    const finished = e.run.finishedAt ? Date.parse(e.run.finishedAt) : this.ctx.clock.now();
    const closes = e.run.windowClosesAt ? Date.parse(e.run.windowClosesAt) : finished;
    // The window closed while the machine slept, or the slot was decided more than a sweep after
    // its window closed: nobody was looking when it should have run.
    const asleep = finished >= closes && this.gaps.some((g) => closes >= g.from && closes <= g.to);
    const late = asleep || finished - closes > this.ctx.config.sweepIntervalS * 1000;
    this.raise(kind, `slot:${e.run.jobId}:${e.run.slot}`, `job:${e.run.jobId}`, { jobId: e.run.jobId, job: job?.name ?? e.run.job }, {
      runId: e.run.id,
      slot: e.run.slot,
      reason: e.message,
      late,
      asleep,
    });
  }

  /** The run ended failed for good (retries used, or a backfill's attempts): said at once, not after repeats. */
  private runFailed(run: Run, message: string): void {
    this.raise('run_failed', `fail:run:${run.id}:${run.attempt}`, `job:${run.jobId}`, { jobId: run.jobId, job: run.job }, {
      runId: run.id,
      slot: run.slot,
      slotAt: run.slotAt,
      attempts: run.attempt,
      error: message,
      output: boundedOutput(run.output),
    });
  }

  /**
   * A run of the job succeeded or a slot was backfilled: the job's failure items whose every slot
   * is now behind a success, or older than the run that just succeeded, are resolved.
   */
  private jobRecovered(run: Run, because: string): void {
    const subject = `job:${run.jobId}`;
    const settled = (item: InboxItem) => {
      const entries = Array.isArray(item.evidence.entries) ? (item.evidence.entries as Facts[]) : [];
      return entries.every((x) => {
        if (typeof x.runId !== 'string') return false;
        if (x.runId === run.id) return true;
        if (typeof x.slotAt === 'string' && x.slotAt <= run.slotAt && run.disposition === 'ran') return true;
        const now = this.q.runState.get(x.runId);
        return now !== undefined && (now.status === 'success' || now.disposition === 'backfilled');
      });
    };
    this.inbox.resolveAny(JOB_FAILURE_KINDS, subject, `${run.job}: ${because}`, settled);
  }

  // ---- repeated failures ----------------------------------------------------------------------

  /** The job's latest dispatched runs: when the newest REPEATED_FAILURES or more failed, each failure of the streak is an occurrence. */
  private failures(jobId: string): void {
    const recent = this.q.recentRuns.all(jobId);
    const streak: typeof recent = [];
    for (const r of recent) {
      if (r.status !== 'failed') break;
      streak.push(r);
    }
    if (streak.length < REPEATED_FAILURES) return;
    const name = this.q.jobPolicy.get(jobId)?.name ?? jobId;
    // Oldest first, so the item's newest entry is the latest failure.
    streak.reverse().forEach((r, i) => {
      this.raise('repeated_failures', `failure:run:${r.id}`, `job:${jobId}`, { jobId, job: name }, { runId: r.id, slot: r.slot, slotAt: new Date(r.slot_at).toISOString(), error: r.last_error, streak: i + 1 });
    });
  }

  // ---- tasks and instances --------------------------------------------------------------------

  private taskBlocked(task: Pick<Task, 'id' | 'title' | 'role' | 'attempt' | 'note' | 'output'>, by: string): void {
    this.raise('needs_human', `block:task:${task.id}:${task.attempt}`, `task:${task.id}`, { taskId: task.id, title: task.title, role: task.role }, {
      attempt: task.attempt,
      note: task.note,
      output: boundedOutput(task.output),
      by,
    });
  }

  private taskFailed(task: Pick<Task, 'id' | 'title' | 'role' | 'attempt' | 'note' | 'output'>, by: string): void {
    this.raise('task_failed', `fail:task:${task.id}:${task.attempt}`, `task:${task.id}`, { taskId: task.id, title: task.title, role: task.role }, {
      attempt: task.attempt,
      note: task.note,
      output: boundedOutput(task.output),
      by,
    });
  }

  /** A managed agent entered a crash loop (raised at once), or runs again / was stopped or removed (resolved). */
  private managedChanged(e: CoreEventOf<'managed.changed'>): void {
    const subject = `managed:${e.managedAgentId}`;
    if (e.action === 'crash_looping') {
      const name = this.q.managedName.get(e.managedAgentId)?.name ?? e.managedAgentId;
      this.raise('crash_looping', `crashloop:${e.managedAgentId}:${this.ctx.clock.now()}`, subject, { managedAgentId: e.managedAgentId, name }, { message: e.message ?? null });
      return;
    }
    const resolution =
      e.action === 'recovered' ? 'it has kept running since its last start' : e.action === 'delete' ? 'the managed agent was removed' : e.action === 'stop' ? 'the managed agent was stopped' : null;
    if (resolution) this.inbox.resolve('crash_looping', subject, resolution);
  }

  /** A delivery gave up (raised at once), or the next one to that webhook got through (resolved). */
  private webhookDelivery(e: CoreEventOf<'webhook.delivery'>): void {
    const subject = `webhook:${e.webhookId}`;
    if (e.status === 'delivered') {
      this.inbox.resolve('webhook_dead', subject, 'a later notification to this webhook was delivered');
      return;
    }
    this.raise('webhook_dead', `dead:delivery:${e.deliveryId}:${this.ctx.clock.now()}`, subject, { webhookId: e.webhookId, url: e.url ?? e.webhookId }, {
      deliveryId: e.deliveryId,
      title: e.itemTitle,
      kind: e.itemKind,
      attempts: e.attempts,
      error: e.error,
    });
  }

  /** The instance went offline: when its locks expired with it, that is one occurrence (keyed by the first expiry row). */
  private instanceLost(instanceId: string): void {
    const inst = this.q.instance.get(instanceId);
    const locks = this.q.lostLocks.all(instanceId, instanceId);
    const first = locks[0];
    // Expiries from before its last heartbeat belong to an earlier episode (it came back since).
    if (!first || (inst && first.expired_at < inst.last_heartbeat_at)) return;
    this.raise('instance_lost', `lost:${instanceId}:${first.id}`, `instance:${instanceId}`, { instanceId, name: inst?.name ?? instanceId, role: inst?.role ?? '?' }, {
      at: new Date(first.expired_at).toISOString(),
      why: first.reason === 'heartbeat_timeout' ? 'It stopped sending heartbeats.' : 'It disconnected and did not come back within the grace.',
      locks: locks.map((l) => ({ taskId: l.task_id, fence: l.fence, title: l.title })),
    });
  }

  // ---- reconcile ------------------------------------------------------------------------------

  /**
   * Raises from the rows what the events may have missed (a crash between a commit and its
   * listener): held runs, blocked tasks, and instances lost in the last day. Idempotent.
   */
  reconcile(): number {
    let raised = 0;
    const count = (fn: () => void, key: string) => {
      if (this.inbox.seen(key)) return;
      this.guard('reconcile', fn);
      raised++;
    };
    for (const r of this.q.heldRuns.all()) {
      count(
        () =>
          this.runHeld(r.error_class === 'needs_human' ? 'needs_human' : 'held', {
            id: r.id,
            jobId: r.job_id,
            job: r.job_name,
            slot: r.slot,
            attempt: r.attempt,
            output: r.output === null ? null : JSON.parse(r.output),
            errorClass: r.error_class as Run['errorClass'],
          }, r.last_error ?? 'held for review'),
        `hold:run:${r.id}:${r.attempt}`,
      );
    }
    for (const t of this.q.blockedTasks.all()) {
      count(() => this.taskBlocked({ ...t, output: t.output === null ? null : JSON.parse(t.output) }, 'reconcile'), `block:task:${t.id}:${t.attempt}`);
    }
    for (const { instance_id } of this.q.recentLosses.all(this.ctx.clock.now() - 86_400_000)) {
      const first = this.q.lostLocks.all(instance_id, instance_id)[0];
      if (first) count(() => this.instanceLost(instance_id), `lost:${instance_id}:${first.id}`);
    }
    return raised;
  }
}
