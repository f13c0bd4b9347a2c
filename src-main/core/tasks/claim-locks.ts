/**
 * Mechanism 1 — the atomic claim lock (SPEC §2, rules P1–P5).
 *
 * Invariants:
 * 1. P1: a task has a holder iff it has a row in `locks` (primary key = task id), and then its
 *    status is `in_progress`. Claim, report and expiry change both in one transaction.
 * 2. P2: a claim that finds nothing returns `{ task: null }` at once; there is no retry or wait.
 * 3. P3: only tasks with `unmet_deps = 0` are candidates; best priority first, then oldest.
 * 4. The fence grows by one on every claim of a task, so an older holder's fence is stale forever.
 * 5. P5: renew and report must present the current fence and be the lock's instance; anyone else
 *    gets `not_holder` (409) and the refusal is audited. The lock row, not the clock, decides:
 *    a holder whose window has passed still wins until the watchdog has expired the lock.
 * 6. A repeat of a report that already took effect (same instance, fence and status) is harmless.
 *    A report after the lock was taken away (expired, force-released) never took effect, whatever
 *    its status: it is `not_holder` and audited, never a replay.
 * 7. Taking a lock away emits `lock.lost` (after commit), so the hub tells the holder at once.
 * 9. Done means verified (PROTOCOL §13): a `done` report of a task that declares checks moves it
 *    to `verifying` (lock released, dependents still waiting) and opens its verification; a claim
 *    that finds a task with `before: true` about to get a later attempt moves it to `verifying`
 *    instead of handing it out, and looks for the next candidate. Both only write rows: the
 *    checks run after the commit, off this path (core/verify).
 * 8. Input is parsed once: `claim`/`renew`/`report` take anything and parse it; the `…Checked`
 *    forms take what a caller already parsed with the same constraints (the hub, whose wire
 *    schema checks every field of the frame — PROTOCOL frames are never validated twice).
 */
import { BUDGET_ACTOR } from '../../common/attention';
import { GafferError } from '../../common/errors';
import type { Task } from '../../common/model';
import { claimInput, renewInput, reportInput, type ClaimInput, type RenewInput, type ReportInput } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import { isoTime } from '../../common/iso-time';
import { writeOrAuditRefusal } from '../audit/refusals';
import type { CoreContext } from '../context';
import type { LockLostReason } from '../../common/protocol';
import { prepareClaimLockStatements, rowToTask, type LockRow, type TaskRepo, type TaskRow } from './task-repo';
import { assertTransition } from './transitions';
import type { Needed } from '../wiring';
import type { VerifySpec } from '../../common/verify';
import { VERIFY_ACTOR } from '../../common/attention';

/** True when `role` hands out no task now (core/wiring.ts: a contribution of the jobs and budgets modules). */
export type ClaimGate = (role: string) => boolean;
/**
 * The loop breaker (core/budgets/loop-breaker.ts), in the report's transaction: may turn a
 * retryable report into `blocked` (the same error too many times in a row); null leaves it as reported.
 */
export type LoopBreakerCheck = (task: { id: number; title: string; role: string; attempt: number }, status: string, note: string | null) => 'blocked' | null;

export interface ClaimResult {
  task: Task | null;
  lock?: { fence: number; expiresAt: number };
}

/** A task that declares `before: true` and is about to get a later attempt whose "already done?" checks have not run. */
function needsPrecheck(c: Pick<TaskRow, 'verify' | 'attempt' | 'prechecked_attempt'>): boolean {
  if (c.verify === null || c.attempt < 1 || c.prechecked_attempt >= c.attempt) return false;
  return (JSON.parse(c.verify) as VerifySpec).before === true;
}

export type ExpiryReason = 'lock_window' | 'heartbeat_timeout' | 'disconnected' | 'force_release';

/** What the holder is told (PROTOCOL §4 `lock_lost.reason`) for each way a lock expires. */
const LOST_BECAUSE: Record<ExpiryReason, LockLostReason> = {
  lock_window: 'expired',
  heartbeat_timeout: 'expired',
  disconnected: 'expired',
  force_release: 'force_release',
};


/** Where a claim or report hands a task to verification (core/verify/task-verifier.ts); inside their write. */
export interface VerifyHooks {
  /** `subject`: `task:<id>` or `run:<id>`. */
  open(subject: string, attempt: number, before: boolean, attemptStartedAt: number): void;
}

/** At most this many "already done?" tasks are set aside by one claim before it answers. */
const PRECHECKS_PER_CLAIM = 16;

/** The instance rows a claim keeps (cleared past this many: ids of instances gone for good pile up). */
const KNOWN_INSTANCES_MAX = 4096;

export class ClaimLocks {
  private readonly instanceOf;
  private readonly expiredAtFence;
  /**
   * Each claiming instance's role and status, as read in `knownEpoch` (a rollback or another
   * writer's commit starts a new epoch and empties it); `instanceChanged` drops one, and the
   * registry calls it on every write that changes an instance's status (its `transition`).
   */
  private readonly known = new Map<string, { role: string; status: string }>();
  private knownEpoch = -1;

  constructor(
    private readonly ctx: CoreContext,
    private readonly repo: TaskRepo,
    /**
     * Roles that hand out no task now (a paused role, a spend cap reached): a claim for one of them
     * is answered "no task" (P2), like an empty queue. Contributed by the jobs and budgets modules
     * (core/wiring.ts); read on every claim.
     */
    private readonly gate: Needed<ClaimGate>,
    /** Given when built (it needs only the inbox, built first): the same error again and again stops the retries. */
    private readonly breaker: LoopBreakerCheck,
    /**
     * Where reported and "already done?" tasks go to be verified (core/verify), built before the
     * board by createCore. Absent (the rehearsal sandbox): checks are not run and `done` is taken as said.
     */
    private readonly verify?: VerifyHooks,
  ) {
    const s = prepareClaimLockStatements(ctx.db);
    this.instanceOf = s.instanceOf;
    this.expiredAtFence = s.expiredAtFence;
  }

  private get lockWindowMs() {
    return this.ctx.config.lockWindowS * 1000;
  }

  claim(input: unknown): ClaimResult {
    return this.claimChecked(parseOrThrow(claimInput, input, 'claim'));
  }

  /** `claim` of already parsed input (invariant 8). */
  claimChecked({ instanceId, role: askedRole }: ClaimInput): ClaimResult {
    return this.ctx.store.write(() => {
      const inst = this.instance(instanceId);
      if (!inst) throw new GafferError('not_found', `unknown instance ${instanceId}`);
      if (inst.status !== 'online') throw new GafferError('forbidden', `instance ${instanceId} is ${inst.status}; say hello again`);
      const role = askedRole ?? inst.role;
      if (this.gate.get()(role)) return { task: null };
      let candidate = this.repo.nextClaimable.get(role);
      const now = this.ctx.clock.now();
      // Invariant 9: a later attempt of a task with `before: true` is checked first, not handed out.
      for (let n = 0; candidate && this.verify && n < PRECHECKS_PER_CLAIM && needsPrecheck(candidate); n++) {
        this.setAsideForPrecheck(candidate, now);
        candidate = this.repo.nextClaimable.get(role);
      }
      if (!candidate) return { task: null };
      const fence = candidate.fence + 1;
      const expiresAt = now + this.lockWindowMs;
      assertTransition('claim', candidate.status, 'in_progress');
      this.repo.insertLock.run(candidate.id, instanceId, fence, now, expiresAt);
      this.repo.markClaimed.run(fence, instanceId, now, now, candidate.id);
      if (candidate.previously_expired) this.repo.markReclaimed.run(instanceId, now, candidate.id);
      // The row as the two writes above left it (saves re-reading it on the hot path). Updated in
      // place: spreading a better-sqlite3 row into a new object costs more than the whole query.
      const row = candidate as TaskRow;
      row.status = 'in_progress';
      row.fence = fence;
      row.attempt = candidate.attempt + 1;
      row.last_holder = instanceId;
      row.updated_at = now;
      row.l_instance = instanceId;
      row.l_fence = fence;
      row.l_claimed = now;
      row.l_expires = expiresAt;
      const task = rowToTask(row);
      this.ctx.audit.append({
        type: 'lock.claim',
        actor: instanceId,
        subject: `task:${task.id}`,
        detail: { fence, attempt: task.attempt, expiresAt: task.lock!.expiresAt, previouslyExpired: task.previouslyExpired, role },
        traceId: candidate.trace_id,
      });
      this.ctx.store.emit({ type: 'task.claimed', task, instanceId, fence });
      return { task, lock: { fence, expiresAt } };
    });
  }

  /** The instance's row changed (registry.ts): the next claim reads it again. */
  instanceChanged(instanceId: string): void {
    this.known.delete(instanceId);
  }

  /** `instanceId`'s role and status, read once per store epoch (see `known`). */
  private instance(instanceId: string): { role: string; status: string } | undefined {
    const epoch = this.ctx.store.epoch;
    if (epoch !== this.knownEpoch || this.known.size >= KNOWN_INSTANCES_MAX) {
      this.known.clear();
      this.knownEpoch = epoch;
    }
    let inst = this.known.get(instanceId);
    if (inst === undefined) {
      inst = this.instanceOf.get(instanceId);
      if (inst) this.known.set(instanceId, inst);
    }
    return inst;
  }

  renew(input: unknown): { expiresAt: number } {
    return this.renewChecked(parseOrThrow(renewInput, input, 'renew'));
  }

  /** `renew` of already parsed input (invariant 8). */
  renewChecked({ instanceId, taskId, fence }: RenewInput): { expiresAt: number } {
    return this.writeOrReject(instanceId, taskId, fence, 'renew', () => {
      this.requireHolder(instanceId, taskId, fence);
      const traceId = this.repo.status.get(taskId)!.trace_id;
      const expiresAt = this.ctx.clock.now() + this.lockWindowMs;
      this.repo.extendLock.run(expiresAt, taskId);
      this.ctx.audit.append({
        type: 'lock.renew',
        actor: instanceId,
        subject: `task:${taskId}`,
        detail: { fence, expiresAt: isoTime(expiresAt) },
        traceId,
      });
      this.ctx.store.emit({ type: 'task.renewed', taskId, instanceId, fence, expiresAt });
      return { expiresAt };
    });
  }

  report(input: unknown): { task: Task; replayed: boolean } {
    return this.reportChecked(parseOrThrow(reportInput, input, 'report'));
  }

  /** `report` of already parsed input (invariant 8). */
  reportChecked(args: ReportInput): { task: Task; replayed: boolean } {
    const { instanceId, taskId, fence } = args;
    return this.writeOrReject(instanceId, taskId, fence, 'report', () => {
      const t = this.repo.row.get(taskId);
      const lock = t && t.l_instance !== null;
      // Invariant 6: only a report that took effect can be repeated; a lock that expired at this
      // fence was taken away, and the report never took effect.
      const same = t && (t.status === args.status || (args.status === 'done' && t.status === 'verifying'));
      if (t && !lock && same && t.fence === fence && t.last_holder === instanceId && !this.expiredAtFence.get(taskId, fence)) {
        return { task: rowToTask(t), replayed: true };
      }
      if (!t) throw new GafferError('not_found', `unknown task ${taskId}`);
      if (!lock) throw new GafferError('not_holder', `task ${taskId} is not locked; claim it first`);
      this.requireHolder(instanceId, taskId, fence, { instance_id: t.l_instance!, fence: t.l_fence! });
      const from = t.status;
      const now = this.ctx.clock.now();
      const reported = args.note ?? null;
      const broken = this.breaker({ id: taskId, title: t.title, role: t.role, attempt: t.attempt }, args.status, reported);
      const status = broken ?? args.status;
      // Invariant 9: "done" of a task with checks is "verifying" until they pass.
      const to = status === 'done' && t.verify !== null && this.verify ? 'verifying' : status;
      assertTransition('report', from, to);
      const note = broken ? `loop breaker: the same error came too many times in a row, retries stopped: ${reported ?? ''}`.slice(0, 4000) : reported;
      const output = args.output === undefined ? null : JSON.stringify(args.output);
      this.repo.deleteLock.run(taskId);
      this.repo.setReported.run(to, note, output, now, taskId);
      if (to === 'done') this.repo.releaseDependentsOf(taskId, this.ctx.store.epoch);
      if (to === 'verifying') this.verify!.open(`task:${taskId}`, t.attempt, false, t.attempt_started_at ?? t.l_claimed ?? now);
      // The row as the writes above left it, updated in place (see claim).
      t.status = to;
      t.note = note;
      t.output = output;
      t.updated_at = now;
      t.l_instance = t.l_fence = t.l_claimed = t.l_expires = null;
      const task = rowToTask(t);
      this.ctx.audit.append({
        type: 'lock.release',
        actor: instanceId,
        subject: `task:${taskId}`,
        detail: { fence, from, to, ...(args.note ? { note: args.note } : {}) },
        traceId: t.trace_id,
      });
      this.ctx.store.emit({ type: 'task.changed', task, from, to, actor: instanceId });
      return { task, replayed: false };
    });
  }

  /**
   * Expires the lock on `taskId` (watchdog, instance loss, or operator force-release). The task
   * returns to the backlog marked `previouslyExpired`; nothing the agent wrote is rolled back.
   * Must run inside a write. Returns false when there was no lock.
   */
  expireLockTx(taskId: number, reason: ExpiryReason, actor: string, detail: Record<string, unknown> = {}): boolean {
    const lock = this.repo.lock.get(taskId);
    if (!lock) return false;
    const cause = reason === 'force_release' ? 'force_release' : 'expire';
    const { status, trace_id: traceId } = this.repo.status.get(taskId)!;
    assertTransition(cause, status, 'backlog');
    const now = this.ctx.clock.now();
    this.repo.deleteLock.run(taskId);
    this.repo.setExpired.run(now, taskId);
    this.repo.insertExpiry.run(taskId, lock.instance_id, lock.fence, reason, now);
    this.ctx.audit.append({
      type: reason === 'force_release' ? 'operator.force_release' : 'lock.expire',
      actor,
      subject: `task:${taskId}`,
      detail: {
        holder: lock.instance_id,
        fence: lock.fence,
        reason,
        expiresAt: isoTime(lock.expires_at),
        ...detail,
      },
      traceId,
    });
    this.ctx.store.emit({ type: 'lock.expired', taskId, instanceId: lock.instance_id, fence: lock.fence, reason });
    this.ctx.store.emit({ type: 'lock.lost', taskId, instanceId: lock.instance_id, fence: lock.fence, reason: LOST_BECAUSE[reason] });
    this.ctx.store.emit({ type: 'task.changed', task: this.repo.get(taskId)!, from: 'in_progress', to: 'backlog', actor });
    return true;
  }

  /**
   * Takes the lock on `taskId` away because the attempt passed its spend cap (core/budgets): the
   * task is blocked with `note` for the operator (unblock or cancel it), and the holder is told
   * `lock_lost` (`budget`). Must run inside a write. Returns false when there was no lock.
   */
  takeForBudgetTx(taskId: number, note: string, detail: Record<string, unknown>): boolean {
    const lock = this.repo.lock.get(taskId);
    if (!lock) return false;
    const { status, trace_id: traceId } = this.repo.status.get(taskId)!;
    assertTransition('budget', status, 'blocked');
    this.repo.deleteLock.run(taskId);
    this.repo.setBlocked.run(note, this.ctx.clock.now(), taskId);
    this.ctx.audit.append({ type: 'lock.budget', actor: BUDGET_ACTOR, subject: `task:${taskId}`, detail: { holder: lock.instance_id, fence: lock.fence, from: status, to: 'blocked', ...detail }, traceId });
    this.ctx.store.emit({ type: 'lock.lost', taskId, instanceId: lock.instance_id, fence: lock.fence, reason: 'budget' });
    this.ctx.store.emit({ type: 'task.changed', task: this.repo.get(taskId)!, from: 'in_progress', to: 'blocked', actor: BUDGET_ACTOR });
    return true;
  }

  /** Invariant 9: backlog → verifying for the "already done?" checks of `candidate`'s next attempt. */
  private setAsideForPrecheck(candidate: Pick<TaskRow, 'id' | 'attempt' | 'status' | 'trace_id' | 'attempt_started_at' | 'updated_at'>, now: number): void {
    assertTransition('precheck', candidate.status, 'verifying');
    this.repo.setPrechecking.run(now, candidate.id);
    this.verify!.open(`task:${candidate.id}`, candidate.attempt, true, candidate.attempt_started_at ?? candidate.updated_at);
    this.ctx.audit.append({
      type: 'task.precheck',
      actor: VERIFY_ACTOR,
      subject: `task:${candidate.id}`,
      detail: { from: candidate.status, to: 'verifying', attempt: candidate.attempt },
      traceId: candidate.trace_id,
    });
    this.ctx.store.emit({ type: 'task.changed', task: this.repo.get(candidate.id)!, from: candidate.status, to: 'verifying', actor: VERIFY_ACTOR });
  }

  private requireHolder(instanceId: string, taskId: number, fence: number, lock: Pick<LockRow, 'instance_id' | 'fence'> | undefined = this.repo.lock.get(taskId)): void {
    if (!lock) {
      if (!this.repo.status.get(taskId)) throw new GafferError('not_found', `unknown task ${taskId}`);
      throw new GafferError('not_holder', `task ${taskId} is not locked; claim it first`);
    }
    if (lock.instance_id !== instanceId || lock.fence !== fence) {
      throw new GafferError(
        'not_holder',
        lock.instance_id !== instanceId
          ? `task ${taskId} is held by another instance`
          : `stale fence ${fence} for task ${taskId}; the current fence is ${lock.fence}`,
      );
    }
  }

  /**
   * Runs `fn` in a write; if it is refused as not-holder / invalid-transition, the refused write
   * rolls back, the refusal is audited in a write of its own, and the error is rethrown.
   */
  private writeOrReject<T>(instanceId: string, taskId: number, fence: number, op: string, fn: () => T): T {
    return writeOrAuditRefusal(this.ctx, fn, (e) => ({
      type: 'lock.reject',
      actor: instanceId,
      subject: `task:${taskId}`,
      detail: { op, fence, code: e.code, message: e.message },
      traceId: this.repo.status.get(taskId)?.trace_id ?? null,
    }));
  }

}
