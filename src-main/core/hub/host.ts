/**
 * The hub's internal ports: what each of its parts may ask of the others. Every part is handed
 * the narrow port it needs — never the hub, never the whole core — so the modules form a tree:
 *
 *   hub.ts ──▶ session.ts ──▶ requests.ts
 *     │  └──▶ presence.ts, prechecks.ts, runs.ts, lost-locks.ts
 *     └──────────────▶ host.ts (this file: types only) ◀── every part
 *
 * Nothing here has behaviour; the hub builds the objects that implement these ports.
 */
import type { Clock } from '../../common/clock';
import type { SchedulerConfig } from '../../common/config';
import type { Logger } from '../../common/logger';
import type { AgentPush } from '../../common/protocol';
import type { TokenInfo, TokenStore } from '../auth';
import type { CoreEvent } from '../events';
import type { SubmitOptions } from '../db/group-commit';
import type { InstanceRegistry } from '../instances';
import type { Board, ClaimLocks } from '../tasks';
import type { HubOptions } from './ports';
import type { InstanceLoads } from './store';

export type SessionState = 'awaiting_hello' | 'hello_pending' | 'ready' | 'closed';

export type ResolvedHubOptions = Required<HubOptions>;

export type RejectionKind = 'host' | 'origin' | 'token' | 'capacity';

/** A session as the push dispatchers and the presence table see it. */
export interface Peer {
  readonly sessionId: string;
  readonly state: SessionState;
  /** Set once `hello` has committed. */
  readonly instanceId: string | null;
  readonly role: string | null;
  /** False when its `hello` said `takesRuns: false`: it is never picked for a job trigger. */
  readonly takesRuns: boolean;
  readonly token: TokenInfo | null;
  /** Order of connection (tie break: the earlier connection first). */
  readonly connectSeq: number;
  /** When it was last picked for a push (least-recently-picked tie breaks). */
  lastPickSeq: number;
  lastHeartbeatAt: number;
  lastPingAt: number;
  /** Sends one push (encoded from its schema type). */
  push(p: AgentPush): void;
  /** Sends a protocol-level ping, if the transport has them. */
  ping(): void;
  /** Closes the session with `code` (its cleanup runs at once). */
  fail(code: number, reason: string): void;
}

/** The core services agent requests reach: a narrow view of `Core`. */
export interface AgentCore {
  readonly instances: Pick<InstanceRegistry, 'register' | 'heartbeat'>;
  readonly locks: Pick<ClaimLocks, 'claimChecked' | 'renewChecked' | 'reportChecked'>;
  readonly tasks: Pick<Board, 'create' | 'get'>;
  readonly tokens: Pick<TokenStore, 'verify'>;
}

/** Clock, settings, logger and the event bus: what every part may read or emit. */
export interface HubEnv {
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly logger: Logger;
  emit(e: CoreEvent): void;
}

/** Durable writes and audit rows, all through the group committer. */
export interface Journal {
  /** Runs `op` in the next group commit; resolves once it is durable. `replayable`: see GroupCommitter's SubmitOptions. */
  commit<T>(op: () => T, opts?: SubmitOptions): Promise<T>;
  /** `commit` without a reply: a failure is logged (expected refusals silently). */
  fire(op: () => unknown, what: string): void;
  audit(type: string, subject: string, detail: Record<string, unknown>, traceId?: string | null, actor?: string): void;
}

/** Chooses the session a push goes to. */
export interface PeerPicker {
  isClosed(): boolean;
  /**
   * The least loaded ready session of `role` whose instance is online and not in `excluded`: held
   * locks plus `extraLoad(instanceId)` (the offers out to it, for a job trigger), then the one
   * picked least recently, then the earliest connected; with `runsOnly`, only sessions that take job
   * runs. Picking counts as its turn. With `loads`, each instance's status and held locks are read
   * into it once and taken from it after (store.ts `InstanceLoads`).
   */
  pick(role: string, excluded: ReadonlySet<string>, extraLoad?: (instanceId: string) => number, runsOnly?: boolean, loads?: InstanceLoads): Peer | undefined;
}
