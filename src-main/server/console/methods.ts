/**
 * The console's method table: the one implementation of `ConsoleApi.call` on the main side.
 * The Electron IPC handler and the headless HTTP route both dispatch here; only the actor differs
 * (`operator:desktop` / `operator:browser`).
 *
 * 1. This is a trust boundary: the method name is checked against the allow-list
 *    (`isConsoleMethod`: the catalogue's operations the console may call) and the arguments are
 *    parsed with the catalogue entry's `input` (common/ops) before anything runs. A bad call is
 *    `bad_request` and changes nothing.
 * 2. Every operator action passes the actor and the reason to the core, which audits it in the
 *    same transaction as the change.
 * 3. `dispatch` never throws: it answers a `ConsoleReply`. Unexpected errors are logged and
 *    answered as a generic `internal` error that leaks no internals.
 * 4. The handlers are exactly the catalogue's console operations: a handler without an entry, or
 *    an entry without a handler, fails `createConsoleMethods` at start (`checkHandlers`).
 */
import { recoveryBoundS } from '../../common/config';
import {
  CONSOLE_METHODS,
  isConsoleMethod,
  type ConsoleInput,
  type ConsoleMethod,
  type ConsoleReply,
  type ConsoleResult,
  type ConsoleSettings,
  type Dashboard,
  type InstanceView,
} from '../../common/console-api';
import { GafferError, isGafferError, toErrorBody } from '../../common/errors';
import { OPS } from '../../common/ops';
import { applyReasonPolicy } from '../../common/ops/reason-policy';
import { isoTime } from '../../common/iso-time';
import { parseOrThrow } from '../../common/validate';
import type { Core } from '../../core/create-core';
import { OPERATOR_CALLER } from '../../core/tasks/idempotency-store';
import { createAttentionHandlers } from './methods-attention';
import { createJobsHandlers } from './methods-jobs';
import { createLogsHandlers } from './methods-logs';
import { createManagedHandlers } from './methods-managed';
import { lastLocalDays, localDayStart, localWeekStart, prepareReadModels, type ReadModels } from './read-models';

/** Who is calling and what to report in `settings.get`. */
export interface ConsoleContext {
  /** Recorded on every operator action: `operator:desktop` or `operator:browser`. */
  actor: string;
  /** The local server's port (agents and HTTP API), or null when it is not running. */
  port: number | null;
  dataDir: string | null;
  version: string;
}

/** What the jobs module contributes to the console (`core.jobs` implements it). */
export interface JobsConsolePort {
  /** Backfills the operator must act on: held or failed, plus queued ones. */
  runsNeedingAttention(): number;
  /** Upcoming triggers, soonest first. */
  nextTriggers(now: number, limit: number): Dashboard['nextTriggers'];
  /**
   * The one kill switch, the one the job runner obeys. The jobs module owns its row (`jobs.settings`),
   * audits the change and announces it; the console never writes the row itself.
   */
  killSwitch(): boolean;
  setKillSwitch(input: { on: boolean; reason: string; actor: string }): void;
}

export interface ConsoleMethodOptions {
  /** Default: `core.jobs`. */
  jobs?: JobsConsolePort;
  /** Prepared read models to share (e.g. with the tray); made here when absent. */
  readModels?: ReadModels;
}

type Args<M extends ConsoleMethod> = ConsoleInput<M>;
type Handlers = { [M in ConsoleMethod]: (args: Args<M>) => ConsoleResult<M> | Promise<ConsoleResult<M>> };

export interface ConsoleMethods {
  /** Validates and runs one method; throws `GafferError` on refusal. */
  call<M extends ConsoleMethod>(method: M, args: unknown): Promise<ConsoleResult<M>>;
  /** Same, from untrusted input (any method name), answering a serialisable reply. Never throws. */
  dispatch(method: unknown, args: unknown): Promise<ConsoleReply<unknown>>;
  readonly readModels: ReadModels;
}

const NEXT_TRIGGERS = 10;

/**
 * Invariant 4: the handler table and the catalogue's console operations name the same methods.
 * The types already say so; this catches a handler table assembled from pieces at run time (a
 * spread that lost or added a key) and tells a new operation's author what is missing.
 */
export function checkHandlers(names: Iterable<string>): void {
  const have = new Set(names);
  const missing = CONSOLE_METHODS.filter((m) => !have.has(m));
  const extra = [...have].filter((m) => !isConsoleMethod(m));
  if (missing.length || extra.length) {
    throw new Error(
      `console handlers do not match the operation catalogue (common/ops):${missing.length ? ` no handler for ${missing.join(', ')};` : ''}${extra.length ? ` no console operation for ${extra.join(', ')}` : ''}`,
    );
  }
}

export function createConsoleMethods(core: Core, ctx: ConsoleContext, opts: ConsoleMethodOptions = {}): ConsoleMethods {
  const rm = opts.readModels ?? prepareReadModels(core);
  // The jobs module (core.jobs) satisfies the port; a test or a shell may pass its own.
  const jobs: JobsConsolePort = opts.jobs ?? core.jobs;
  const actor = ctx.actor;

  const killSwitch = (): boolean => jobs.killSwitch();
  /** Who turned the kill switch on, when and why (the jobs module's settings row); null while it is off. */
  const killSwitchBy = (): Dashboard['killSwitchBy'] => {
    if (!killSwitch()) return null;
    const k = core.jobs.settings().killSwitch;
    return { by: k.by ?? '?', at: k.at ?? '?', reason: k.reason ?? '' };
  };

  const settings = (): ConsoleSettings => ({
    config: { ...core.config },
    killSwitch: killSwitch(),
    requireReason: core.operatorSettings.read().requireReason,
    port: ctx.port,
    dataDir: ctx.dataDir,
    version: ctx.version,
  });

  const handlers: Handlers = {
    'dashboard.get': () => {
      const now = core.clock.now();
      const throughput = rm.throughput(now);
      // The week (from Monday 00:00 local) lies inside the 7 days of throughput: no second scan.
      const weekStart = localWeekStart(now);
      const days = lastLocalDays(now, throughput.length);
      const completedThisWeek = throughput.reduce((n, p, i) => (days[i]!.start >= weekStart ? n + p.done : n), 0);
      const dashboard: Dashboard = {
        serverTime: new Date(now).toISOString(),
        onlineInstances: rm.onlineInstances(),
        completedThisWeek,
        expiredLocksToday: rm.expiredSince(localDayStart(now)),
        runsNeedingAttention: jobs.runsNeedingAttention(),
        recoveryBoundS: recoveryBoundS(core.config),
        killSwitch: killSwitch(),
        killSwitchBy: killSwitchBy(),
        roles: rm.roleSummaries(now),
        throughput,
        nextTriggers: jobs.nextTriggers(now, NEXT_TRIGGERS),
        storage: core.storageStatus(),
        inbox: core.inbox.counts(),
        budgets: core.budgets.view(now),
      };
      return dashboard;
    },
    'tasks.list': (a) => core.tasks.list(a),
    'tasks.get': (a) => core.tasks.view(a.taskId),
    'tasks.create': (a) => core.tasks.create(a, { actor, caller: OPERATOR_CALLER }),
    'tasks.reprioritise': (a) => core.tasks.reprioritise({ ...a, actor }),
    'tasks.cancel': (a) => core.tasks.cancel({ ...a, actor }),
    'tasks.retry': (a) => core.tasks.retry({ ...a, actor }),
    'tasks.unblock': (a) => core.tasks.unblock({ ...a, actor }),
    'tasks.forceRelease': (a) => core.tasks.forceRelease({ ...a, actor }),
    'tasks.editPayload': (a) => core.tasks.editPayload({ ...a, actor }),
    'tasks.count': (a) => core.bulkTasks.count(a),
    'tasks.bulk': (a) => core.bulkTasks.apply({ ...a, actor }),
    'roles.summary': () => rm.roleSummaries(core.clock.now()),
    'locks.expiredToday': () => rm.expiredCards(localDayStart(core.clock.now())),
    'instances.list': () => {
      const held = rm.heldByInstance();
      const runs = rm.runsByInstance();
      const lostLocks = (id: string): InstanceView['lostLocks'] =>
        core.hub.lostLocksOf(id).map((l) => ({ taskId: l.taskId, title: core.tasks.get(l.taskId).title, reason: l.reason, at: isoTime(l.at) }));
      return core.instances.list().map((i): InstanceView => ({ ...i, held: held.get(i.id) ?? [], lostLocks: lostLocks(i.id), currentRuns: runs.get(i.id) ?? [] }));
    },
    'tokens.list': () => core.tokens.list(),
    'tokens.create': (a) => {
      const { id, token } = core.tokens.create({ name: a.name, role: a.role ?? null, actor });
      return { id, token };
    },
    'tokens.revoke': (a) => core.tokens.revoke({ ...a, actor }),
    'audit.query': (a) => core.auditQuery.query(a),
    'audit.count': (a) => core.auditQuery.count(a),
    'audit.verify': async () => {
      // Chunked and yielding: a full check of millions of rows never blocks the process.
      const { firstId: _first, lastId: _last, anchor: _anchor, ...result } = await core.verifyAudit();
      return result;
    },
    'settings.get': () => settings(),
    'settings.setKillSwitch': (a) => {
      jobs.setKillSwitch({ on: a.on, reason: a.reason, actor });
      return settings();
    },
    'settings.setRequireReason': (a) => {
      core.operatorSettings.setRequireReason({ ...a, actor });
      return settings();
    },
    'signals.list': (a) => core.signals.list(a),
    'signals.set': (a) => core.signals.set({ ...a, actor }),
    'signals.clear': (a) => core.signals.clear({ ...a, actor }),
    // jobs.*, runs.*, backfills.*, calendars.* (methods-jobs.ts)
    ...createJobsHandlers(core, actor),
    // inbox.*, notifications.* (methods-attention.ts)
    ...createAttentionHandlers(core, actor),
    // logs.*, usage.* (methods-logs.ts)
    ...createLogsHandlers(core, actor),
    // managedAgents.* (methods-managed.ts)
    ...createManagedHandlers(core, actor),
  };

  checkHandlers(Object.keys(handlers));

  const call = async <M extends ConsoleMethod>(method: M, args: unknown): Promise<ConsoleResult<M>> => {
    if (!isConsoleMethod(method)) throw new GafferError('bad_request', `unknown console method ${JSON.stringify(String(method)).slice(0, 120)}`);
    // The operator's reason setting meets the entry's reason rule here, before the parse (reason-policy.ts).
    const raw = applyReasonPolicy(OPS[method], args ?? {}, core.operatorSettings.read().requireReason);
    const parsed = parseOrThrow(OPS[method].input, raw, `${method} arguments`) as ConsoleInput<M>;
    const handler = handlers[method] as (a: unknown) => ConsoleResult<M> | Promise<ConsoleResult<M>>;
    return handler(parsed);
  };

  return {
    call,
    readModels: rm,
    async dispatch(method, args) {
      try {
        if (!isConsoleMethod(method)) throw new GafferError('bad_request', `unknown console method ${JSON.stringify(String(method)).slice(0, 120)}`);
        return { ok: true, value: await call(method, args) };
      } catch (e) {
        if (isGafferError(e)) return { ok: false, error: toErrorBody(e) };
        core.logger.error('console call failed', { method: String(method).slice(0, 100), error: e instanceof Error ? e.stack : String(e) });
        return { ok: false, error: { code: 'internal', status: 500, message: 'internal error' } };
      }
    },
  };
}
