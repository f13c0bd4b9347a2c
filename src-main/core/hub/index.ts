/** The agent hub: transport-agnostic sessions, pushes and the run-sink port. */
export { Hub, type HubDeps, type RejectionKind, type SessionInfo } from './hub';
export type {
  ConnectInfo,
  HubConnection,
  HubOptions,
  HubSocket,
  JobTrigger,
  JobsHubPort,
  PrecheckVerdict,
  LogSink,
  RunSink,
} from './ports';
export type { InstanceLoads } from './store';
export { TokenBucket } from './limits';
export { badRequest, readId, type WireId } from './wire';
