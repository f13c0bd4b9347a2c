/**
 * Runs verifications off the claim path (PROTOCOL §13).
 *
 * Invariants:
 * 1. At most `concurrency` verifications run at once; the rest wait in order. A claim, a report
 *    or a trigger never waits for one: they only queue it (after their commit).
 * 2. One verification per key (`task:<id>`, `run:<id>`) at a time: a second submit of a key that
 *    is queued or running is ignored (the recovery at start and an event may both ask).
 * 3. The checks of one verification run one after the other; all of them run, so the evidence
 *    names every failure, not only the first.
 * 4. `stop()` ends every running check's processes (checks.ts invariant 2) and drops the queue;
 *    nothing finishes after it (a stopped verification is re-run at the next start).
 */
import type { CheckResult, VerifyCheck } from '../../common/verify';
import { runCheck, type CheckContext } from './checks';

export interface VerifyRequest {
  key: string;
  checks: readonly VerifyCheck[];
  context: Omit<CheckContext, 'signal'>;
  /** Called with every check's result, unless the runner was stopped meanwhile. */
  finished(results: CheckResult[]): void;
}

export const DEFAULT_VERIFY_CONCURRENCY = 2;

export class VerifyRunner {
  private readonly queue: VerifyRequest[] = [];
  private readonly active = new Set<string>();
  private readonly abort = new AbortController();
  private readonly idleWaiters: Array<() => void> = [];
  private stopped = false;

  constructor(
    private readonly concurrency = DEFAULT_VERIFY_CONCURRENCY,
    private readonly onError: (e: unknown) => void = () => {},
  ) {}

  submit(req: VerifyRequest): boolean {
    if (this.stopped || this.active.has(req.key) || this.queue.some((q) => q.key === req.key)) return false;
    this.queue.push(req);
    this.pump();
    return true;
  }

  /** Verifications running or waiting. */
  get pending(): number {
    return this.active.size + this.queue.length;
  }

  /** Resolves once nothing runs or waits (tests, the bench). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
    this.abort.abort();
  }

  private pump(): void {
    while (!this.stopped && this.active.size < this.concurrency && this.queue.length > 0) {
      const req = this.queue.shift()!;
      this.active.add(req.key);
      void this.run(req).finally(() => {
        this.active.delete(req.key);
        this.pump();
        if (this.pending === 0) for (const w of this.idleWaiters.splice(0)) w();
      });
    }
    if (this.stopped && this.active.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private async run(req: VerifyRequest): Promise<void> {
    const results: CheckResult[] = [];
    for (const check of req.checks) {
      results.push(await runCheck(check, { ...req.context, signal: this.abort.signal }));
      if (this.stopped) return;
    }
    try {
      req.finished(results);
    } catch (e) {
      this.onError(e);
    }
  }
}
