/** Duration and cost cells of the Tasks and Runs lists (the rows' usage comes from store/use-row-usage). */
import type { SubjectUsage } from '../../src-main/common/console-api';
import type { Task } from '../../src-main/common/model';
import type { Run } from '../../src-main/common/job-schema';
import { formatDurationS, parseInstant } from '../lib/format';
import { formatCost } from './logs/usage-words';

/** How long a task's work took: since its claim while held, else its latest attempt's span (first to last log line). */
export function taskDurationMs(task: Task, usage: SubjectUsage | undefined, now: number): number | null {
  if (task.status === 'in_progress' && task.lock) return now - (parseInstant(task.lock.claimedAt) ?? now);
  return usage?.latestAttemptMs ?? null;
}

/** A run's time from start to finish (so far, while running). */
export function runDurationMs(run: Run, now: number): number | null {
  const start = parseInstant(run.startedAt);
  if (start === null) return null;
  return (parseInstant(run.finishedAt) ?? now) - start;
}

export function DurationCell({ ms }: { ms: number | null }) {
  return ms === null ? <span className="muted">—</span> : <span className="mono small">{formatDurationS(ms / 1000)}</span>;
}

export function CostCell({ usage }: { usage: SubjectUsage | undefined }) {
  if (!usage || (usage.usage.costUsd === 0 && usage.usage.inputTokens === 0 && usage.usage.outputTokens === 0)) return <span className="muted">—</span>;
  const u = usage.usage;
  return (
    <span className="mono small" title={`${u.inputTokens.toLocaleString('en')} tokens in, ${u.outputTokens.toLocaleString('en')} out`}>
      {formatCost(u.costUsd)}
    </span>
  );
}
