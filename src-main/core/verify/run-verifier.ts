/**
 * Done means verified, for job runs (PROTOCOL §13): the run attempt's phase is `verifying` (the
 * run-phase table's `verify` edge, written by the jobs engine in the report's write, which also
 * opened the verification row); the checks run here, off the claim path; the outcome is applied
 * by the jobs engine in one write with the evidence (success, or `onFail`: retry with
 * `previousError`, held for a human with a `verify_failed` item, or failed).
 * The same for a backfill's attempt (its backfill stays dispatched, with no holder, meanwhile) and
 * for the "already done?" checks before a retry (`before: true`: passing, the run is `success`
 * with disposition `already_done` and nothing is dispatched; failing, the retry goes out).
 * At start, every run attempt left verifying is verified again.
 */
import { VERIFY_ACTOR } from '../../common/attention';
import type { CheckResult, VerifyOnFail, VerifySpec } from '../../common/verify';
import { verificationError } from '../../common/verify';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import type { Inbox } from '../inbox';
import type { AttemptWorkspace } from './checks';
import type { VerifyRunner } from './runner';
import type { VerificationStore } from './store';
import { prepareVerifyingRuns } from './store';
import type { Needed } from '../wiring';

/** What the verifier needs of the jobs module. */
export interface RunVerifyPort {
  verifyingRun(runId: string): { verify: VerifySpec; output: unknown; attempt: number; traceId: string | null } | undefined;
  verified(runId: string, attempt: number, record: () => { passed: boolean; onFail: VerifyOnFail; error: string; before?: boolean }): boolean;
}

export interface RunVerifierDeps {
  ctx: CoreContext;
  store: VerificationStore;
  runner: VerifyRunner;
  inbox: Inbox;
  /** The jobs module's contribution (core/wiring.ts): read once the core is assembled. */
  jobs: Needed<RunVerifyPort>;
  workspaceOf?: (subject: string, attempt: number) => AttemptWorkspace | undefined;
}

export class RunVerifier {
  private listener: Disposable | undefined;
  private backfillListener: Disposable | undefined;
  private readonly verifying;

  constructor(private readonly d: RunVerifierDeps) {
    // Every run subject with an open verification: run attempts and backfills left verifying.
    this.verifying = prepareVerifyingRuns(d.ctx.db);
  }

  listen(): void {
    this.listener ??= this.d.ctx.events.on('run.updated', (e) => {
      if (e.run.disposition === 'verifying') this.kick(e.run.id);
    });
    this.backfillListener ??= this.d.ctx.events.on('backfill.changed', (e) => {
      if (e.action === 'backfill.verify') this.kick(e.backfill.runId);
    });
  }

  recover(): void {
    for (const { id } of this.verifying.all()) this.kick(id);
  }

  stop(): void {
    this.listener?.dispose();
    this.backfillListener?.dispose();
    this.listener = this.backfillListener = undefined;
  }

  private kick(runId: string): void {
    const subject = `run:${runId}`;
    const v = this.d.store.current(subject);
    const run = this.d.jobs.get().verifyingRun(runId);
    if (!v || !run) return;
    const workspace = this.d.workspaceOf?.(subject, v.attempt);
    this.d.runner.submit({
      key: subject,
      checks: run.verify.checks,
      context: { ...(workspace ? { workspace } : {}), attemptStartedAt: v.attempt_started_at, output: run.output },
      finished: (results) => this.settle(runId, v.id, run.verify, results),
    });
  }

  private settle(runId: string, verificationId: number, spec: VerifySpec, results: CheckResult[]): void {
    const subject = `run:${runId}`;
    const passed = results.every((r) => r.passed);
    const onFail = spec.onFail ?? 'retry';
    const error = passed ? '' : verificationError({ checks: results });
    let attempt = 0;
    let before = false;
    const moved = this.d.jobs.get().verified(runId, this.d.store.current(subject)?.attempt ?? -1, () => {
      const v = this.d.store.current(subject);
      if (!v || v.id !== verificationId) return { passed, onFail, error };
      attempt = v.attempt;
      before = v.before === 1;
      this.d.store.finish(v.id, passed, results, this.d.ctx.clock.now());
      const traceId = this.d.jobs.get().verifyingRun(runId)?.traceId ?? null;
      for (const r of results) {
        this.d.ctx.audit.append({
          type: r.passed ? 'verify.pass' : 'verify.fail',
          actor: VERIFY_ACTOR,
          subject,
          detail: { check: r.name, kind: r.kind, detail: r.detail, durationMs: r.durationMs, attempt: v.attempt, ...(before ? { before: true } : {}) },
          traceId,
        });
      }
      return { passed, onFail, error, before };
    });
    // A failed "already done?" check only lets the retry go: nothing to ask the operator.
    if (moved && !passed && !before && onFail === 'needs_human') {
      this.d.inbox.raise({ kind: 'verify_failed', key: `verify:${subject}:${attempt}`, subject, about: { runId }, entry: { attempt, error, checks: results.map(({ name, passed: p, detail }) => ({ name, passed: p, detail })) } });
    }
  }
}
