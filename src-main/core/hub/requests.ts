/**
 * The request table: each agent request type after `hello` → its handler, typed by the request
 * (`AgentRequestOf<T>`) and by the result its ok reply carries (`AgentResults[T]`). This is the
 * one place where the wire meets the core.
 *
 * Invariants:
 * 1. A handler acts only as the sender's own instance (`from.instanceId` comes from the committed
 *    `hello`, never from a frame). A role-bound token cannot claim or create for another role.
 * 2. Every change goes through the group committer, so a reply is sent only after it is durable.
 *    The frame was parsed with its wire schema (session.ts); the core is called with it as it is
 *    (`…Checked`, claim-locks invariant 8), never parsed a second time.
 * 3. Refusals that need no write settle before any commit does: they are answered at once.
 * 4. `report` with `claimNext` (PROTOCOL §10) is ONE op of the group committer: the report, then
 *    the claim, in one transaction, answered after its commit. A refused report claims nothing; a
 *    refused claim leaves the report standing (`next: {task: null}`); a storage failure undoes
 *    both. A repeat of a report that already took effect (`replayed`) never claims: the lock the
 *    first attempt took, if its reply was lost, is listed in `hello.locks` on resume (the SDKs
 *    hand it back) or expires with its window.
 */
import { GafferError } from '../../common/errors';
import { isoTime } from '../../common/iso-time';
import type { Task } from '../../common/model';
import { agentCaller, type ClaimResult } from '../tasks';
import type { AgentRequest, AgentRequestOf, AgentRequestType, AgentResults } from '../../common/protocol';
import type { AgentCore, HubEnv, Journal, Peer } from './host';
import type { LostLocks } from './lost-locks';
import type { LogSink } from './ports';
import type { Prechecks } from './prechecks';
import type { RunGate } from './runs';

/** What the handlers may use. */
export interface RequestHost {
  readonly env: HubEnv;
  readonly journal: Journal;
  readonly core: AgentCore;
  readonly prechecks: Pick<Prechecks, 'answer'>;
  readonly runs: Pick<RunGate, 'call'>;
  readonly lostLocks: Pick<LostLocks, 'settled'>;
  /** Where `log` and `usage` go (the logs module), if attached. */
  logs(): LogSink | undefined;
}

/** The logs module's sink, or `not_found` when this scheduler keeps no logs. */
function logSink(host: RequestHost): LogSink {
  const sink = host.logs();
  if (!sink) throw new GafferError('not_found', 'logs are not kept by this scheduler');
  return sink;
}

/** The sender of a request: a ready session and its committed instance. */
export interface Sender {
  readonly peer: Peer;
  readonly instanceId: string;
  readonly role: string;
}

export type HandledType = Exclude<AgentRequestType, 'hello'>;
export type HandledRequest = Exclude<AgentRequest, { type: 'hello' }>;
type Result<T extends HandledType> = AgentResults<Task>[T];
export type RequestHandler<T extends HandledType> = (host: RequestHost, from: Sender, req: AgentRequestOf<T>) => Promise<Result<T>>;

/** A claim as the wire answers it. */
function claimReply(r: ClaimResult): Result<'claim'> {
  return r.task && r.lock ? { task: r.task, lock: { fence: r.lock.fence, expiresAt: isoTime(r.lock.expiresAt) } } : { task: null };
}

/** The claim after a committed report (invariant 4): refused → no task, the report stands. */
function claimAfterReport(host: RequestHost, from: Sender): ClaimResult {
  try {
    return host.core.locks.claimChecked({ instanceId: from.instanceId, role: from.role });
  } catch (e) {
    // Its own savepoint rolled back; a storage failure must still undo the whole step.
    if (e instanceof GafferError && e.code !== 'unavailable') return { task: null };
    throw e;
  }
}

function requireRole(from: Sender, role: string, what: string): void {
  const token = from.peer.token;
  if (token?.role && token.role !== role) throw new GafferError('forbidden', `token ${token.id} may only ${what} for role ${token.role}`);
}

/**
 * Claim, renew and report change nothing outside the database but what a rollback undoes (the
 * claim locks keep only caches keyed by the store's epoch; events leave after the commit), so the
 * group committer may run them without savepoints first (group-commit.ts invariant 6).
 */
const REPLAYABLE = { replayable: true } as const;

export const REQUEST_HANDLERS: { readonly [T in HandledType]: RequestHandler<T> } = {
  heartbeat: (host, from) =>
    host.journal.commit(() => {
      host.core.instances.heartbeat(from.instanceId);
      const now = host.env.clock.now();
      from.peer.lastHeartbeatAt = now;
      return { serverTime: isoTime(now) };
    }),

  claim: async (host, from, req) => {
    const role = req.role ?? from.role;
    requireRole(from, role, 'claim');
    const r = await host.journal.commit(() => host.core.locks.claimChecked({ instanceId: from.instanceId, role }), REPLAYABLE);
    if (r.task) host.lostLocks.settled(from.instanceId, r.task.id);
    return claimReply(r);
  },

  renew: async (host, from, req) => {
    const r = await host.journal.commit(() => host.core.locks.renewChecked({ instanceId: from.instanceId, taskId: req.taskId, fence: req.fence }), REPLAYABLE);
    return { expiresAt: isoTime(r.expiresAt) };
  },

  report: async (host, from, req) => {
    const { taskId, fence, status, note, output, claimNext } = req;
    try {
      const r = await host.journal.commit(() => {
        const reported = host.core.locks.reportChecked({ instanceId: from.instanceId, taskId, fence, status, note, output });
        if (!claimNext) return { reported };
        return { reported, next: reported.replayed ? ({ task: null } as ClaimResult) : claimAfterReport(host, from) };
      }, REPLAYABLE);
      const { task, replayed } = r.reported;
      if (!r.next) return { task, replayed };
      if (r.next.task) host.lostLocks.settled(from.instanceId, r.next.task.id);
      return { task, replayed, next: claimReply(r.next) };
    } finally {
      // Reporting a task it was told it lost (refused) is how the instance shows it stopped.
      host.lostLocks.settled(from.instanceId, taskId);
    }
  },

  create_task: async (host, from, req) => {
    requireRole(from, req.role, 'create tasks');
    const { title, role, priority, payload, dependsOn, budget, idempotencyKey } = req;
    // Keys are the token's own (PROTOCOL §17): every instance of one token shares them, nobody else does.
    const who = { actor: from.instanceId, caller: agentCaller(from.peer.token?.id) };
    const r = await host.journal.commit(() => host.core.tasks.create({ title, role, priority, payload, dependsOn, budget, idempotencyKey }, who));
    return { task: r.task, replayed: r.replayed };
  },

  // The jobs engine decides what these mean (its offer, the attempt's holder, refusals): the hub forwards.
  run_started: async (host, from, req) => {
    await host.runs.call((sink) => sink.runStarted(from.instanceId, req));
    return {};
  },

  run_step: async (host, from, req) => {
    await host.runs.call((sink) => sink.runStep(from.instanceId, req));
    return {};
  },

  run_result: async (host, from, req) => {
    const r = await host.runs.call((sink) => sink.runResult(from.instanceId, req));
    // The sink returns `{run}` (and `replayed: true` for a repeat); the reply always says which.
    return { replayed: false, ...(r as Omit<Result<'run_result'>, 'replayed'>) };
  },

  precheck_result: async (host, from, req) => {
    host.prechecks.answer(from.peer, req);
    return {};
  },

  // PROTOCOL §5: the sink checks that the sender holds the task or run, and answers once the
  // lines (or the usage) are durable. Lines never go through the group commit (core/logs).
  log: async (host, from, req) => logSink(host).log(from.instanceId, req),

  usage: async (host, from, req) => logSink(host).usage(from.instanceId, req),

  // PROTOCOL §15: stored with the sender's attempt; the sink checks the holder as for `usage`.
  artifact: async (host, from, req) => logSink(host).artifact(from.instanceId, req),
};

/** Runs the handler of `req.type`. */
export function handleRequest(host: RequestHost, from: Sender, req: HandledRequest): Promise<object> {
  // One cast: TypeScript cannot correlate `req.type` with the handler it selects.
  const handler = REQUEST_HANDLERS[req.type] as RequestHandler<HandledType>;
  return handler(host, from, req as never);
}
