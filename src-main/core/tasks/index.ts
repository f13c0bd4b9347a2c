/** The task board (PROTOCOL §3–§4): tasks, claim locks and fences, idempotency, the watchdog's sweep, and the board's read models. */
export { Board, type BoardVerification } from './board';
export { BulkTasks } from './bulk';
export { ClaimLocks, type ClaimGate, type ClaimResult, type ExpiryReason, type VerifyHooks } from './claim-locks';
export { IdempotencyStore, agentCaller } from './idempotency-store';
export { prepareTaskRepo, type TaskRepo } from './task-repo';
export { TaskSearch } from './search-store';
export { Watchdog, type SweptInstances } from './watchdog';
export { prepareTaskReads, THROUGHPUT_DAYS, type ExpiryRow, type RoleCountsRow, type TaskReads } from './read-store';
