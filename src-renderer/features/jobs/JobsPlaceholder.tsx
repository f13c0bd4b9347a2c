import { EmptyState } from '../../components/States';

/** Shown under the Jobs nav entry until the jobs module provides `jobs.*` console methods. */
export function JobsPlaceholder() {
  return (
    <div className="view" data-testid="view-jobs">
      <EmptyState title="Jobs arrive with the jobs module">
        Periodic jobs (cron + time zone + business calendar), the slot ledger, the backfill queue and “Why didn’t it run?” appear here once the jobs module is installed. One-off
        tasks live under Role queues.
      </EmptyState>
    </div>
  );
}
