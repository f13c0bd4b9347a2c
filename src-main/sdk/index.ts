/**
 * Gaffer agent SDK (Node). Depends only on `ws` and `src-main/common`.
 *
 *   const agent = await connect({ url: 'ws://127.0.0.1:7311/agent', token, role: 'dev', name: 'worker-1' });
 *   await agent.work(async ({ task, signal }) => { ...; return { output } });
 */
export {
  Agent,
  connect,
  renewIntervalMs,
  type AgentEventMap,
  type AgentOptions,
  type ClaimedTask,
  type ClaimReply,
  type CreateTaskInput,
  type JobContext,
  type JobHandler,
  type JobOptions,
  type LogCaptureOptions,
  type PrecheckAnswer,
  type PrecheckContext,
  type PrecheckHandler,
  type ReportExtra,
  type ReportReply,
  type StepOptions,
  type UsageInput,
  type ArtifactInput,
  type WorkContext,
  type WorkHandler,
  type WorkOptions,
  type WorkResult,
} from './agent';
export { agentUrl, backoffDelay, type ReconnectPolicy } from './connection';
export { agentTokenFromEnvironment } from './token';
export { LogOutbox, type LogOptions, type LogOutboxOptions } from './log-outbox';
export { usageKind } from './usage-coalescer';
export {
  AgentClosedError,
  AgentClosingError,
  BacklogError,
  BlockedError,
  ConnectionLostError,
  FatalError,
  GafferRequestError,
  GafferSdkError,
  LockLostError,
  NeedsHumanError,
  RequestTimeoutError,
  RetryableError,
  RunCancelledError,
  TaskFailedError,
} from './errors';
export type { Task } from '../common/model';
export type { LogLevel, LogStream, UsageTotals } from '../common/logs';
export type { ErrorClass } from '../common/protocol';
