import { EmptyState } from '../../components/States';
import { HAS_JOBS } from '../../store/console-store';

/**
 * The Jobs entry until its views exist. Without `jobs.*` console methods it says the module is
 * not there; with them (views still to come) it points to the HTTP API meanwhile.
 */
export function JobsPlaceholder() {
  return (
    <div className="view" data-testid="view-jobs">
      {HAS_JOBS ? (
        <EmptyState title="Jobs views are on their way">
          The jobs module is running, but its console views (job list and editor, slot ledger, “Why didn’t it run?”) are not built yet. Meanwhile use the local HTTP API:{' '}
          <code>GET /api/v1/jobs</code>, <code>GET /api/v1/runs</code>, <code>GET /api/v1/jobs/&#123;id&#125;/explain?at=…</code>.
        </EmptyState>
      ) : (
        <EmptyState title="Jobs arrive with the jobs module">
          Periodic jobs (cron + time zone + business calendar), the slot ledger, the backfill queue and “Why didn’t it run?” appear here once the jobs module is installed. One-off
          tasks live under Role queues.
        </EmptyState>
      )}
    </div>
  );
}
