/**
 * Who may log or report usage for a task or run (PROTOCOL §5): the current lock holder of the
 * task, the acknowledged instance of the run's attempt. Everyone else is `not_holder`.
 * A read of the committed state on this thread: a point lookup, no write, no wait.
 */
import { GafferError } from '../../common/errors';
import { runSubject, taskSubject, type LogSubject } from '../../common/logs';
import type { Db } from '../db/open';
import { prepareTaskHolder } from './store';

/** What a frame is attributed to once its sender is known to hold it. */
export interface HeldWork {
  subject: LogSubject;
  attempt: number;
  role: string;
  jobId: string | null;
  /** A task's: the fence of the lock the sender holds (a later `fence` field is checked against it). */
  fence?: number;
}

/** A log or usage frame names its work by exactly one of these. */
export const EXACTLY_ONE_SUBJECT = 'give exactly one of "taskId" and "runId"';

/** A `fence` that is not the one of the lock held on `taskId`. */
export function staleFence(fence: number, taskId: number, current: number | null): GafferError {
  return new GafferError('not_holder', `fence ${fence} is stale for task ${taskId} (current ${current})`);
}

export interface RunHolderPort {
  runHolder(runId: string): { instanceId: string | null; attempt: number; jobId: string; role: string };
}

export interface HolderCheck {
  task(instanceId: string, taskId: number, fence?: number): HeldWork;
  run(instanceId: string, runId: string): HeldWork;
}

export function holderCheck(db: Db, runs: () => RunHolderPort | undefined): HolderCheck {
  const lockOf = prepareTaskHolder(db);
  return {
    task(instanceId, taskId, fence) {
      const r = lockOf.get(taskId);
      if (!r) throw new GafferError('not_found', `unknown task ${taskId}`);
      if (r.instance_id !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold the lock on task ${taskId}`);
      if (fence !== undefined && r.fence !== fence) throw staleFence(fence, taskId, r.fence);
      return { subject: taskSubject(taskId), attempt: r.attempt, role: r.role, jobId: null, fence: r.fence! };
    },
    run(instanceId, runId) {
      const port = runs();
      if (!port) throw new GafferError('not_found', `unknown run ${runId} (no job runner)`);
      const h = port.runHolder(runId);
      if (h.instanceId !== instanceId) throw new GafferError('not_holder', `instance ${instanceId} does not hold run ${runId} (attempt ${h.attempt})`);
      return { subject: runSubject(runId), attempt: h.attempt, role: h.role, jobId: h.jobId };
    },
  };
}
