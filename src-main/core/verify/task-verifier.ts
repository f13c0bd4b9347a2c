/**
 * Done means verified, for tasks (PROTOCOL §13).
 *
 * Invariants:
 * 1. A task is `verifying` exactly while it has an open verification row: the report or claim
 *    that moved it there opened the row in the same write (claim-locks.ts invariant 9).
 * 2. The checks run after that commit, in the runner (off the claim path); their outcome is
 *    applied in one write: the evidence, one `verify.pass` / `verify.fail` audit row per check,
 *    and the task's move (`task.verified`, from verifying) — only if the task is still verifying
 *    and the row is still the open one (a cancel meanwhile keeps the evidence and moves nothing).
 * 3. Outcomes: all pass → done (dependents released; `already_done` when the checks ran before a
 *    later attempt). One fails: after a report, `onFail` — retry → backlog with `previousError`,
 *    needs_human → blocked with a `verify_failed` inbox item, fail → failed; before a later
 *    attempt → backlog, and that attempt is handed out without checking again.
 * 4. At start every task left `verifying` (Gaffer stopped mid-check) is verified again.
 */
import { VERIFY_ACTOR } from '../../common/attention';
import type { CheckResult, VerifySpec } from '../../common/verify';
import { describeVerification, verificationError } from '../../common/verify';
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import type { Inbox } from '../inbox';
import type { TaskRepo, VerifyHooks } from '../tasks';
import type { AttemptWorkspace } from './checks';
import type { VerifyRunner } from './runner';
import type { VerificationStore } from './store';
import { prepareVerifyingTasks } from './store';

export interface TaskVerifierDeps {
  ctx: CoreContext;
  repo: TaskRepo;
  store: VerificationStore;
  runner: VerifyRunner;
  inbox: Inbox;
  logger: Logger;
  /** The attempt's workspace (PROTOCOL §15), where Gaffer knows it. */
  workspaceOf?: (subject: string, attempt: number) => AttemptWorkspace | undefined;
}

export class TaskVerifier implements VerifyHooks {
  private listener: Disposable | undefined;
  private readonly verifying;

  constructor(private readonly d: TaskVerifierDeps) {
    this.verifying = prepareVerifyingTasks(d.ctx.db);
  }

  /** Listens for tasks moved to verifying (from construction on: nothing moved at start-up slips past). */
  listen(): void {
    this.listener ??= this.d.ctx.events.on('task.changed', (e) => {
      if (e.to === 'verifying') this.kick(e.task.id);
    });
  }

  /** Verifies again the tasks a stop left verifying (invariant 4). */
  recover(): void {
    for (const { id } of this.verifying.all()) this.kick(id);
  }

  stop(): void {
    this.listener?.dispose();
    this.listener = undefined;
  }

  /** A job run's "already done?" checks of `attempt` ran already (the jobs engine asks before a retry). */
  checkedBefore(subject: string, attempt: number): boolean {
    return this.d.store.checkedBefore(subject, attempt);
  }

  /** Inside the write that moves the task to verifying (invariant 1). */
  open(subject: string, attempt: number, before: boolean, attemptStartedAt: number): void {
    this.d.store.open(subject, attempt, before, attemptStartedAt, this.d.ctx.clock.now());
  }

  private kick(taskId: number): void {
    const subject = `task:${taskId}`;
    const v = this.d.store.current(subject);
    const t = this.d.repo.row.get(taskId);
    if (!v || !t || t.status !== 'verifying' || t.verify === null) return;
    const spec = JSON.parse(t.verify) as VerifySpec;
    const workspace = this.d.workspaceOf?.(subject, v.attempt);
    this.d.runner.submit({
      key: subject,
      checks: spec.checks,
      context: { ...(workspace ? { workspace } : {}), attemptStartedAt: v.attempt_started_at, output: t.output === null ? null : JSON.parse(t.output) },
      finished: (results) => this.settle(taskId, v.id, spec, results),
    });
  }

  private settle(taskId: number, verificationId: number, spec: VerifySpec, results: CheckResult[]): void {
    const subject = `task:${taskId}`;
    this.d.ctx.store.write(() => {
      const v = this.d.store.current(subject);
      if (!v || v.id !== verificationId) return; // a newer verification took its place
      const now = this.d.ctx.clock.now();
      const passed = results.every((r) => r.passed);
      const before = v.before === 1;
      this.d.store.finish(v.id, passed, results, now);
      const t = this.d.repo.row.get(taskId)!;
      for (const r of results) {
        this.d.ctx.audit.append({
          type: r.passed ? 'verify.pass' : 'verify.fail',
          actor: VERIFY_ACTOR,
          subject,
          detail: { check: r.name, kind: r.kind, detail: r.detail, durationMs: r.durationMs, attempt: v.attempt, ...(before ? { before: true } : {}) },
          traceId: t.trace_id,
        });
      }
      if (t.status !== 'verifying') return; // cancelled meanwhile: the evidence stays, nothing moves
      const verification = { passed, checks: results, before };
      const words = describeVerification(verification);
      let to: 'done' | 'backlog' | 'blocked' | 'failed';
      let note: string | null = null;
      let previousError: string | null = t.previous_error;
      let disposition: string | null = null;
      if (passed) {
        to = 'done';
        previousError = null;
        if (before) {
          disposition = 'already_done';
          note = words;
        }
      } else if (before) {
        to = 'backlog';
      } else {
        const error = verificationError(verification);
        const onFail = spec.onFail ?? 'retry';
        to = onFail === 'retry' ? 'backlog' : onFail === 'needs_human' ? 'blocked' : 'failed';
        previousError = error;
        if (to !== 'backlog') note = error;
      }
      // The checks that just failed are not run again before the attempt they let through.
      this.d.repo.setVerified.run({ id: taskId, status: to, note, previousError, prechecked: t.attempt, disposition, now });
      if (to === 'done') this.d.repo.releaseDependentsOf(taskId, this.d.ctx.store.epoch);
      this.d.ctx.audit.append({
        type: 'task.verified',
        actor: VERIFY_ACTOR,
        subject,
        detail: { from: 'verifying', to, passed, attempt: v.attempt, ...(before ? { before: true } : {}), ...(disposition ? { disposition } : {}), outcome: words },
        traceId: t.trace_id,
      });
      const task = this.d.repo.get(taskId)!;
      if (to === 'blocked') {
        this.d.inbox.raise({
          kind: 'verify_failed',
          key: `verify:${subject}:${v.attempt}`,
          subject,
          about: { taskId, title: t.title, role: t.role },
          entry: { attempt: v.attempt, error: previousError, checks: results.map(({ name, passed: p, detail }) => ({ name, passed: p, detail })) },
        });
      }
      this.d.ctx.store.emit({ type: 'task.changed', task, from: 'verifying', to, actor: VERIFY_ACTOR });
    });
  }
}
