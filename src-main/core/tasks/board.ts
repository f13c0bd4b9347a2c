/**
 * The task board: creating tasks (with idempotency), listing and searching them, and the
 * operator's edges (cancel, retry, unblock, force-release, reprioritise, payload edits). Every
 * operator action needs a reason and is audited with its actor, in the transaction of the change.
 */
import { GafferError } from '../../common/errors';
import type { Task, TaskPage, TaskStatus } from '../../common/model';
import type { Verification, VerifySpec } from '../../common/verify';
import {
  createTaskInput,
  editPayloadInput,
  listTasksInput,
  operatorTaskAction,
  reprioritiseInput,
  retryTaskInput,
  type CreateTaskInput,
} from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { Needed } from '../wiring';
import type { CoreContext } from '../context';
import { Where } from '../db/where';
import { newTraceId } from '../ids';
import type { ClaimLocks } from './claim-locks';
import { bodyHash, callerOfActor, callerScope, type IdempotencyCaller, type IdempotencyStore } from './idempotency-store';
import { prepareBoardStatements, rowToTask, taskPage, type TaskRepo } from './task-repo';
import type { TaskSearch } from './search-store';
import { assertTransition, type TransitionCause } from './transitions';

export interface Actor {
  /** Who asked: `operator:<name>`, an instance id, `job:<id>`, … */
  actor: string;
  traceId?: string;
  /** Whose idempotency keys (idempotency.ts invariant 3); by default the operator for `operator:*`, else the actor itself. */
  caller?: IdempotencyCaller;
}

export interface CreateResult {
  task: Task;
  replayed: boolean;
}

/** Added to the audit row of an operator edge: the bulk action it belongs to. */
export interface EdgeContext {
  bulk?: string;
}

/** Statuses whose payload an operator may change: not held (its holder works from the payload it claimed), not finished. */
const PAYLOAD_EDITABLE: ReadonlySet<TaskStatus> = new Set(['backlog', 'blocked', 'failed']);

/** What task keys are for; alone, the legacy scope of keys from before they were scoped per caller (migration 017). */
export const TASK_CREATE_SCOPE = 'task.create';

/** What the board needs of the verification module: a declaration's deeper check, and a task's latest evidence. */
export interface BoardVerification {
  /** Throws `bad_request` when a "done when…" declaration cannot be run (e.g. an `output` schema that does not compile). */
  assertVerifiable(spec: VerifySpec): void;
  /** The latest finished verification of `task:<id>`, if any. */
  latest(subject: string): Verification | undefined;
}

export class Board {
  private readonly depStatus;
  private readonly insertBudget;
  private readonly upsertBudget;

  constructor(
    private readonly ctx: CoreContext,
    private readonly repo: TaskRepo,
    private readonly locks: ClaimLocks,
    private readonly idempotency: IdempotencyStore,
    private readonly search: TaskSearch,
    /** The verification module (built before the board), which sits above the tasks' floor: handed in, not imported. */
    private readonly verification: BoardVerification,
    /**
     * PROTOCOL §16: the CLI session the latest attempt of `task:<id>` reported (the logs module's
     * store, built after the board: core/wiring.ts).
     */
    private readonly sessionOf: Needed<(subject: string) => string | undefined>,
  ) {
    const s = prepareBoardStatements(ctx.db);
    this.depStatus = s.depStatus;
    this.insertBudget = s.insertBudget;
    this.upsertBudget = s.upsertBudget;
  }

  create(input: unknown, who: Actor): CreateResult {
    const args = parseOrThrow(createTaskInput, input, 'task');
    const { idempotencyKey, ...body } = args;
    const { budget, ...rest } = body;
    // A budget with no cap in it is no budget; without one the hash is what it was before budgets.
    const normalised = {
      ...rest,
      priority: body.priority ?? 0,
      payload: body.payload ?? null,
      dependsOn: [...new Set(body.dependsOn ?? [])],
      ...(budget && Object.keys(budget).length > 0 ? { budget } : {}),
    };
    const hash = bodyHash(normalised);
    const scope = callerScope(TASK_CREATE_SCOPE, who.caller ?? callerOfActor(who.actor));
    return this.ctx.store.write(() => {
      const now = this.ctx.clock.now();
      if (idempotencyKey) {
        const cached = this.idempotency.lookup<{ taskId: number }>(scope, idempotencyKey, hash, TASK_CREATE_SCOPE);
        if (cached) return { task: this.repo.get(cached.taskId)!, replayed: true };
      }
      const task = this.insert(normalised, now, who);
      if (idempotencyKey) this.idempotency.remember(scope, idempotencyKey, hash, { taskId: task.id });
      return { task, replayed: false };
    });
  }

  private insert(t: Required<Omit<CreateTaskInput, 'idempotencyKey' | 'budget' | 'verify'>> & Pick<CreateTaskInput, 'budget' | 'verify'>, now: number, who: Actor): Task {
    if (t.verify) this.verification.assertVerifiable(t.verify);
    const traceId = who.traceId ?? newTraceId();
    let unmet = 0;
    for (const dep of t.dependsOn) {
      const d = this.depStatus.get(dep);
      if (!d) throw new GafferError('not_found', `dependency ${dep} does not exist`);
      if (d.status !== 'done') unmet++;
    }
    const id = Number(
      this.repo.insertTask.run(t.title, t.role, t.priority, JSON.stringify(t.payload), JSON.stringify(t.dependsOn), unmet, traceId, now, now, t.verify ? JSON.stringify(t.verify) : null)
        .lastInsertRowid,
    );
    for (const dep of t.dependsOn) this.repo.addDependency(id, dep);
    if (t.budget) this.insertBudget.run(id, t.budget.maxCostUsdPerRun ?? null, t.budget.maxTokensPerRun ?? null);
    const task = this.repo.get(id)!;
    this.ctx.audit.append({
      type: 'task.create',
      actor: who.actor,
      subject: `task:${id}`,
      detail: { title: t.title, role: t.role, priority: t.priority, dependsOn: t.dependsOn, unmet, ...(t.budget ? { budget: t.budget } : {}), ...(t.verify ? { verify: t.verify } : {}) },
      traceId,
    });
    this.ctx.store.emit({ type: 'task.created', task });
    return task;
  }

  get(id: number): Task {
    const task = this.repo.get(id);
    if (!task) throw new GafferError('not_found', `unknown task ${id}`);
    return task;
  }

  /** One task as the operator reads it: with its latest verification (PROTOCOL §13), where one ran. */
  view(id: number): Task {
    const task = this.get(id);
    const verification = this.verification.latest(`task:${id}`);
    return verification ? { ...task, verification } : task;
  }

  /** Tasks by role and status, paged by id; with `q`, a search of titles, payloads and ids (task-search.ts). */
  list(input: unknown = {}): TaskPage {
    const f = parseOrThrow(listTasksInput, input, 'task filter');
    const limit = f.limit ?? 100;
    const desc = f.order === 'desc';
    // `after` is the previous page's `next` in the list's own order (docs/protocol.md): newest
    // first, that is below it. `before` (an exclusive upper bound) pages a descending list too.
    const from = desc ? Math.min(f.after ?? Number.MAX_SAFE_INTEGER, f.before ?? Number.MAX_SAFE_INTEGER) : (f.after ?? 0);
    if (f.q !== undefined) {
      const r = this.search.scan({ filter: { ...(f.role ? { role: f.role } : {}), ...(f.status ? { status: f.status } : {}), q: f.q }, order: desc ? 'desc' : 'asc', from, limit });
      return { items: r.rows.map(rowToTask), next: r.next === null ? null : String(r.next), partial: r.partial };
    }
    const where = new Where()
      .and(desc ? 't.id < ?' : 't.id > ?', from)
      .equals('t.role', f.role)
      .equals('t.status', f.status);
    const rows = taskPage(this.ctx.db, where, desc, limit + 1);
    const items = rows.slice(0, limit).map(rowToTask);
    return { items, next: rows.length > limit ? String(items[items.length - 1]!.id) : null, partial: false };
  }

  cancel(input: unknown, edge: EdgeContext = {}): Task {
    const { taskId, reason, actor } = parseOrThrow(operatorTaskAction, input, 'cancel');
    return this.operatorEdge('cancel', 'cancelled', taskId, reason, actor, edge);
  }

  /** Failed → backlog; with `payload`, the payload is replaced in the same transaction ("retry with changes"). */
  retry(input: unknown, edge: EdgeContext = {}): Task {
    return this.backToBacklog('retry', input, edge);
  }

  /** Blocked → backlog; with `payload`, the payload is replaced in the same transaction. */
  unblock(input: unknown, edge: EdgeContext = {}): Task {
    return this.backToBacklog('unblock', input, edge);
  }

  private backToBacklog(cause: 'retry' | 'unblock', input: unknown, edge: EdgeContext): Task {
    const { taskId, reason, actor, payload, budget } = parseOrThrow(retryTaskInput, input, cause);
    return this.ctx.store.write(() => {
      if (payload !== undefined || budget !== undefined) {
        // The edge's own check first: a payload or cap is changed only when the task really goes back.
        assertTransition(cause, this.get(taskId).status, 'backlog');
      }
      if (payload !== undefined) this.replacePayload(taskId, payload, reason, actor);
      if (budget !== undefined) {
        // PROTOCOL §14: the cap per attempt from the next attempt on, in place of the one it had.
        this.upsertBudget.run(taskId, budget.maxCostUsdPerRun ?? null, budget.maxTokensPerRun ?? null);
        this.ctx.audit.append({ type: 'task.budget', actor, subject: `task:${taskId}`, detail: { budget, reason } });
      }
      const task = this.operatorEdge(cause, 'backlog', taskId, reason, actor, edge);
      // PROTOCOL §16: the note a blocked task is unblocked with is the operator's answer to its question.
      if (cause === 'unblock') {
        // …and the conversation that asked it is the one to continue: the stored session, not an agent's memory.
        const answer = reason.trim() ? reason : null;
        this.repo.setAnswer.run(answer, answer === null ? null : (this.sessionOf.get()(`task:${taskId}`) ?? null), taskId);
        return this.get(taskId);
      }
      return task;
    });
  }

  /**
   * Replaces a task's payload (what the next holder receives). Only for a task nobody holds and
   * that is not finished; audited `operator.edit_payload` with the payload before and after.
   */
  editPayload(input: unknown): Task {
    const { taskId, payload, reason, actor } = parseOrThrow(editPayloadInput, input, 'payload edit');
    return this.ctx.store.write(() => {
      this.replacePayload(taskId, payload, reason, actor);
      const task = this.get(taskId);
      this.ctx.store.emit({ type: 'task.changed', task, from: task.status, to: task.status, actor });
      return task;
    });
  }

  private replacePayload(taskId: number, payload: unknown, reason: string, actor: string): void {
    const before = this.get(taskId);
    if (!PAYLOAD_EDITABLE.has(before.status)) {
      throw new GafferError(
        'conflict',
        before.status === 'in_progress'
          ? `task ${taskId} is held by ${before.lock?.instanceId ?? 'an instance'}, which works from the payload it claimed; force-release it first`
          : `task ${taskId} is ${before.status}: its payload can no longer matter`,
      );
    }
    this.repo.setPayload.run(JSON.stringify(payload), this.ctx.clock.now(), taskId);
    this.ctx.audit.append({
      type: 'operator.edit_payload',
      actor,
      subject: `task:${taskId}`,
      detail: { reason, before: before.payload, after: payload },
      traceId: before.traceId,
    });
  }

  /** Takes the lock away from its holder; the task goes back to the backlog, marked previously expired. */
  forceRelease(input: unknown): Task {
    const { taskId, reason, actor } = parseOrThrow(operatorTaskAction, input, 'force-release');
    return this.ctx.store.write(() => {
      const current = this.get(taskId);
      if (!this.locks.expireLockTx(taskId, 'force_release', actor, { operatorReason: reason })) {
        throw new GafferError('invalid_transition', `task ${taskId} is ${current.status}, not held by anyone`);
      }
      return this.get(taskId);
    });
  }

  reprioritise(input: unknown, edge: EdgeContext = {}): Task {
    const { taskId, priority, reason, actor } = parseOrThrow(reprioritiseInput, input, 'reprioritise');
    return this.ctx.store.write(() => {
      const before = this.get(taskId);
      this.repo.setPriority.run(priority, this.ctx.clock.now(), taskId);
      this.ctx.audit.append({
        type: 'operator.reprioritise',
        actor,
        subject: `task:${taskId}`,
        detail: { reason, from: before.priority, to: priority, ...bulkDetail(edge) },
        traceId: before.traceId,
      });
      const task = this.get(taskId);
      this.ctx.store.emit({ type: 'task.changed', task, from: task.status, to: task.status, actor });
      return task;
    });
  }

  private operatorEdge(cause: TransitionCause, to: TaskStatus, taskId: number, reason: string, actor: string, edge: EdgeContext): Task {
    return this.ctx.store.write(() => {
      const { status: from, traceId } = this.get(taskId);
      assertTransition(cause, from, to);
      const lock = this.repo.lock.get(taskId);
      if (lock) this.repo.deleteLock.run(taskId);
      this.repo.setStatus.run(to, this.ctx.clock.now(), taskId);
      this.ctx.audit.append({
        type: `operator.${cause}`,
        actor,
        subject: `task:${taskId}`,
        detail: { reason, from, to, ...(lock ? { revokedHolder: lock.instance_id, fence: lock.fence } : {}), ...bulkDetail(edge) },
        traceId,
      });
      const task = this.get(taskId);
      this.ctx.store.emit({ type: 'task.changed', task, from, to, actor });
      // Only cancel can take a held task (the other operator edges start from failed or blocked).
      if (lock) this.ctx.store.emit({ type: 'lock.lost', taskId, instanceId: lock.instance_id, fence: lock.fence, reason: 'cancelled' });
      return task;
    });
  }
}

function bulkDetail(edge: EdgeContext): { bulk?: string } {
  return edge.bulk ? { bulk: edge.bulk } : {};
}
