/**
 * The hub's ports: what it needs from a transport, and what the jobs module plugs into it.
 * Nothing here knows about `ws` or HTTP, so tests can drive a session with a fake socket.
 */
import type { AgentPush, AgentRequestOf, JobTriggerPush, ArtifactResult, LogResult, UsageResult } from '../../common/protocol';
import type { TokenInfo } from '../auth';
import type { WireId } from './wire';
import type { InstanceLoads } from './store';

/** The minimal socket a transport hands to the hub. */
export interface HubSocket {
  /** Sends one text frame. Never throws for a closed socket (it is simply dropped). */
  send(text: string): void;
  /** Starts a close handshake with `code` and a short `reason`. */
  close(code: number, reason: string): void;
  /** Bytes queued for sending but not yet written (used to cut off agents that stop reading). */
  readonly bufferedAmount: number;
  /** Sends a protocol-level ping, if the transport has them. */
  ping?(): void;
  /** Drops the connection at once, without a close handshake. */
  terminate?(): void;
}

/** What the transport knows about a connection when it hands it over. */
export interface ConnectInfo {
  remoteAddress?: string | null;
  /** A token already verified from the upgrade's `Authorization: Bearer` header. */
  token?: TokenInfo | null;
  /**
   * For a connection admitted without a token: asked when its `hello` authenticates it, so it
   * counts against the transport's cap only from then on. Returns why it may not join (it is then
   * refused `unavailable` and closed 1013), or null.
   */
  admitAtHello?: () => string | null;
}

/** The transport's handle on one session: it forwards what happens on the socket. */
export interface HubConnection {
  readonly sessionId: string;
  /** One text frame arrived. */
  receive(text: string): void;
  /**
   * One text frame arrived as its UTF-8 bytes, not decoded yet: a `log` frame the log sink takes
   * whole (`LogSink.logBytes`) is never turned into a string on this thread; any other frame is
   * decoded and handled as `receive` handles it. The hub keeps the bytes: the caller hands them
   * over and never touches them again (the log worker may take their memory).
   */
  receiveBytes(bytes: Uint8Array): void;
  /** One binary frame arrived (refused: the protocol is JSON text). */
  receiveBinary(): void;
  /**
   * A frame larger than the limit arrived. The hub replies `too_large` (with the frame's `id`, if
   * the transport could read it: see `peekId`) and closes with 4413.
   */
  tooLarge(id?: string | number | null): void;
  /** A ping or pong arrived: the peer is alive (counts as a heartbeat). */
  alive(): void;
  /** The socket is gone (for any reason). Idempotent. */
  closed(code: number, reason: string): void;
}

/**
 * Where job-run messages go. The jobs module registers one with `hub.setRunSink(sink)`; until then
 * `run_started`, `run_step` and `run_result` are answered with `not_found`.
 *
 * Each method receives the instance id of the sender and the validated request, and returns the
 * reply's `result` object or throws a `GafferError` (its code goes back to the agent). Methods are
 * called inside a group commit: do the writes synchronously through the store (`store.write`), and
 * the reply goes out only after they are durable. A returned promise is awaited (its asynchronous
 * part is then outside the group commit). The sink decides everything about a run message —
 * whether the trigger was offered to the sender, who holds the attempt, refusals and their audit.
 */
export interface RunSink {
  /** `run_started`: the instance acknowledges the trigger offered to it. Return `{}`. */
  runStarted(instanceId: string, req: AgentRequestOf<'run_started'>): object | Promise<object>;
  /** `run_step`: a step's side effect is done (checkpoint). Return `{}`. */
  runStep(instanceId: string, req: AgentRequestOf<'run_step'>): object | Promise<object>;
  /** `run_result`: the run finished. Return `{ run }`. */
  runResult(instanceId: string, req: AgentRequestOf<'run_result'>): object | Promise<object>;
}

/**
 * Where `log` and `usage` frames go (PROTOCOL §5): the logs module, handed to the hub when it is
 * built (`HubDeps.logSink`, filled once the logs module stands: core/wiring.ts). The sink checks
 * that the sender holds the task or run, and resolves once what it took is durable.
 */
export interface LogSink {
  log(instanceId: string, req: AgentRequestOf<'log'>): Promise<LogResult>;
  usage(instanceId: string, req: AgentRequestOf<'usage'>): Promise<UsageResult>;
  /** `artifact` (PROTOCOL §15): stored with the sender's attempt, answered once durable. */
  artifact(instanceId: string, req: AgentRequestOf<'artifact'>): Promise<ArtifactResult>;
  /**
   * A frame's text before the hub parses it (so a flood of lines is not parsed on the thread that
   * serves claims): returns the frame's `id` and its answer when the sink takes it as a `log`
   * frame from this sender, else undefined and the hub handles the frame as usual.
   */
  logText?(instanceId: string, text: string): { id: WireId; result: Promise<LogResult> } | undefined;
  /**
   * The same for a frame's UTF-8 bytes, before anyone decoded them: taken when its header reads
   * cleanly from its first bytes (then only the log worker decodes it), else undefined and the hub
   * decodes the frame and goes on as for any text frame (`logText` first).
   */
  logBytes?(instanceId: string, bytes: Uint8Array): { id: WireId; result: Promise<LogResult> } | undefined;
}

/** The body of a `job_trigger` push, as the jobs engine builds it. */
export type JobTrigger = Omit<JobTriggerPush, 'type'>;

/**
 * What the jobs engine asks of the hub — the whole of it, so a fake hub for tests and rehearsals
 * is these five members. The engine owns every offer (who it went to, when its ack is due, where
 * it goes next); the hub picks and sends. Session ends and hellos reach the engine as the core's
 * `session.closed` / `session.hello` events.
 */
export interface JobsHubPort {
  /**
   * The instance a new offer goes to: the least loaded ready, online instance of `role` that takes
   * job runs, not in `exclude` (held locks + `offersOut(instanceId)`, then the one picked least
   * recently, then the earliest connected), or null when there is none. Being picked counts as its turn.
   * With `loads` (a map the caller keeps while no instance's status or held locks can change under
   * it: the engine's pass), each candidate's status and held locks are read into it once, then taken
   * from it.
   */
  pick(role: string, exclude: ReadonlySet<string>, offersOut?: (instanceId: string) => number, loads?: InstanceLoads): string | null;
  /** Sends one push to the live session of `instanceId`; false when it has none. */
  send(instanceId: string, push: AgentPush): boolean;
  /** Instance ids with a live, ready session, optionally of one role. */
  connectedInstances(role?: string): string[];
  /** Instance ids of `role` with a live, ready session that take job runs (`hello` without `takesRuns: false`). */
  runTakers(role: string): string[];
  /** Asks one online instance of `role` to run the named precheck for `slot`. Never rejects. */
  requestPrecheck(role: string, check: string, slot: string, timeoutMs: number): Promise<PrecheckVerdict>;
  /** Registers (or, with `undefined`, removes) where `run_*` requests go. */
  setRunSink(sink: RunSink | undefined): void;
}

/** The answer to `requestPrecheck`: the agent's verdict, or why there is none. */
export type PrecheckVerdict =
  | { status: 'answered'; instanceId: string; ready: boolean; reason?: string; evidence?: unknown }
  | { status: 'timeout' | 'disconnected'; instanceId: string; ready: false; reason: string }
  | { status: 'no_instance'; ready: false; reason: string };

export interface HubOptions {
  /** The first frame must be `hello` within this long (default 10 000 ms, PROTOCOL §1). */
  helloTimeoutMs?: number;
  /** Refuse sessions without a valid agent token (default true). */
  requireToken?: boolean;
  /** Per-connection token bucket: sustained requests per second (default 200). */
  ratePerSecond?: number;
  /** Per-connection token bucket size (default 400). */
  rateBurst?: number;
  /** Requests refused as `rate_limited` in a row before the socket is closed with 4429 (default 200). */
  maxRateStrikes?: number;
  /** An agent whose unsent output exceeds this is cut off (default 4 MiB). */
  maxBufferedBytes?: number;
  /** Frames queued while `hello` is being committed; more is a protocol violation (default 64). */
  maxFramesBeforeReady?: number;
  /**
   * A session that has not heartbeaten for this long is pinged; its pong counts as a heartbeat
   * (default `config.heartbeatIntervalMs`; 0 disables pings).
   */
  pingIntervalMs?: number;
  /** Pings and pongs count as heartbeats at most this often per session (default 1000 ms). */
  minHeartbeatGapMs?: number;
  /** Live sockets one agent token may hold at once; more are refused `too_many_connections` (default 64, PROTOCOL §17). */
  maxConnectionsPerToken?: number;
}
