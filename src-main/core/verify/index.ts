/**
 * Done means verified (PROTOCOL §13): Gaffer runs a task's or job's checks itself before it says
 * done. `checks.ts` runs one check, `runner.ts` runs verifications off the claim path with bounded
 * concurrency, `store.ts` keeps each attempt's evidence, `task-verifier.ts` moves tasks by the
 * outcome. Built once by `createCore`.
 */
import type { Logger } from '../../common/logger';
import type { Verification } from '../../common/verify';
import type { CoreContext } from '../context';
import type { Inbox } from '../inbox';
import type { TaskRepo } from '../tasks';
import type { AttemptWorkspace } from './checks';
import { DEFAULT_VERIFY_CONCURRENCY, VerifyRunner } from './runner';
import { prepareVerificationStore, type VerificationStore } from './store';
import { TaskVerifier } from './task-verifier';
import { RunVerifier, type RunVerifyPort } from './run-verifier';
import type { Needed } from '../wiring';

export { runCheck, type AttemptWorkspace, type CheckContext } from './checks';
export { VerifyRunner } from './runner';
export { TaskVerifier } from './task-verifier';
export type { VerificationStore } from './store';
export { assertVerifiable } from './declaration';
export type { RunVerifyPort } from './run-verifier';

export interface VerifyOptions {
  /** Verifications running at once (default 2). */
  concurrency?: number;
  /** The attempt's workspace (PROTOCOL §15), where Gaffer knows it. */
  workspaceOf?: (subject: string, attempt: number) => AttemptWorkspace | undefined;
}

export interface Verifications {
  readonly runner: VerifyRunner;
  readonly store: VerificationStore;
  readonly tasks: TaskVerifier;
  /** The latest finished verification of `task:<id>` / `run:<id>`. */
  latest(subject: string): Verification | undefined;
  /** Verifies again what a stop left verifying. */
  start(): void;
  /** Ends every running check's processes; nothing more is applied. */
  stop(): void;
}

/**
 * `jobs`: the verifying run attempts, a contribution of the jobs module (core/wiring.ts) — built
 * after this one, since it hands its reported runs here.
 */
export function createVerifications(
  deps: { ctx: CoreContext; repo: TaskRepo; inbox: Inbox; logger: Logger; jobs: Needed<RunVerifyPort> },
  opts: VerifyOptions = {},
): Verifications {
  const runner = new VerifyRunner(opts.concurrency ?? DEFAULT_VERIFY_CONCURRENCY, (e) =>
    deps.logger.error('verification: applying an outcome failed; it runs again at the next start', { error: e instanceof Error ? e.message : String(e) }),
  );
  const store = prepareVerificationStore(deps.ctx.db);
  const workspace = opts.workspaceOf ? { workspaceOf: opts.workspaceOf } : {};
  const tasks = new TaskVerifier({ ctx: deps.ctx, repo: deps.repo, inbox: deps.inbox, logger: deps.logger, store, runner, ...workspace });
  tasks.listen();
  const runs = new RunVerifier({ ctx: deps.ctx, store, runner, inbox: deps.inbox, jobs: deps.jobs, ...workspace });
  runs.listen();
  return {
    runner,
    store,
    tasks,
    latest: (subject) => store.latest(subject),
    start: () => {
      tasks.recover();
      runs.recover();
    },
    stop() {
      tasks.stop();
      runs.stop();
      runner.stop();
    },
  };
}
