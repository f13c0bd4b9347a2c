/** The task board (PROTOCOL §3–§4): tasks, claim locks and fences, idempotency, the watchdog's sweep, and the board's read models. */
export { Board } from './board';
export { BulkTasks } from './bulk';
export { ClaimLocks, type ExpiryReason } from './claim-locks';
export { IdempotencyStore } from './idempotency-store';
export { prepareTaskRepo } from './task-repo';
export { TaskSearch } from './search-store';
export { Watchdog, type SweptInstances } from './watchdog';
export { prepareTaskReads, THROUGHPUT_DAYS, type ExpiryRow, type RoleCountsRow, type TaskReads } from './read-store';
