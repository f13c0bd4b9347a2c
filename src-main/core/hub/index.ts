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
  RunSink,
} from './ports';
