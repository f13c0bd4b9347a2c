/**
 * The composition root. The Electron main process and the headless server both call
 * `createCore`; nothing else constructs core services.
 */
import path from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '../common/clock';
import { DEFAULT_CONFIG, type SchedulerConfig } from '../common/config';
import { silentLogger, type Logger } from '../common/logger';
import { AuditLog } from './audit/audit-log';
import { TokenStore } from './auth/tokens';
import type { CoreContext } from './context';
import { openDatabase, type Db } from './db/open';
import { Store } from './db/store';
import { acquireWriterLock, type WriterLock } from './db/writer-lock';
import { EventBus } from './events';
import { InstanceRegistry } from './instances/registry';
import { Board } from './tasks/board';
import { ClaimLocks } from './tasks/claim-locks';
import { IdempotencyStore } from './tasks/idempotency';
import { prepareTaskRepo } from './tasks/task-repo';
import { Watchdog } from './tasks/watchdog';
import { GroupCommitter, type GroupCommitOptions } from './db/group-commit';
import { Hub } from './hub/hub';
import type { HubOptions } from './hub/ports';
import { AuditQuery } from './audit/audit-query';
import { Signals } from './signals/signals';
import { createJobs, type JobService } from './jobs';
import { GapDetector } from './time/gap-detector';
import { createAttention, type Attention, type Inbox } from './inbox';
import { Budgets } from './budgets/budgets';
import { usageSpend } from './budgets/spend';
import type { WebhookOptions } from './notify/webhooks';

export interface CoreOptions {
  clock?: Clock;
  /** Directory holding gaffer.db and the writer lock. Ignored for the lock when `dbPath` is ':memory:'. */
  dataDir?: string;
  /** Overrides `<dataDir>/gaffer.db`. */
  dbPath?: string;
  config?: Partial<SchedulerConfig>;
  logger?: Logger;
  /** Refuse to start when another Gaffer holds the data directory (default true). */
  singleWriter?: boolean;
  /** Native better-sqlite3 binding for Electron's ABI. */
  nativeBinding?: string;
  /** Agent hub limits and timeouts (hello timeout, rate limit, …). */
  hub?: HubOptions;
  /** Group commit tuning (batch cap); `{ maxBatch: 1 }` turns batching off, for comparison. */
  groupCommit?: GroupCommitOptions;
  /** Outbound webhook requests (timeout, user agent). */
  webhooks?: WebhookOptions;
}

export interface Core {
  readonly clock: Clock;
  readonly config: SchedulerConfig;
  readonly db: Db;
  readonly dbPath: string;
  readonly events: EventBus;
  readonly store: Store;
  readonly audit: AuditLog;
  readonly tasks: Board;
  readonly locks: ClaimLocks;
  readonly instances: InstanceRegistry;
  readonly tokens: TokenStore;
  readonly watchdog: Watchdog;
  /** Group commit: agent writes submitted in one event-loop turn share one transaction. */
  readonly committer: GroupCommitter;
  /** The agent hub (sessions, job_trigger / precheck pushes); transports attach to it. */
  readonly hub: Hub;
  /** Audit browser queries (filtering and paging over millions of rows). */
  readonly auditQuery: AuditQuery;
  /** Readiness signals for business keys. */
  readonly signals: Signals;
  /** Central jobs: runner, runs, backfills, calendars, explain/preview/ledger. */
  readonly jobs: JobService;
  /** Notices stalls, sleeps and clock steps once, and has every deadline shifted (`gaps.check()` on power resume). */
  readonly gaps: GapDetector;
  /** The operator's attention: inbox, its checks, notification settings and webhook deliveries. */
  readonly attention: Attention;
  /** `attention.inbox`: everything that needs the operator. */
  readonly inbox: Inbox;
  /** Daily spend caps (per role, global) and per-run caps, read from the usage ledger. */
  readonly budgets: Budgets;
  readonly logger: Logger;
  /** Starts timers (watchdog). Separate from construction so tests can drive sweeps by hand. */
  start(): void;
  close(): void;
}

export function createCore(opts: CoreOptions = {}): Core {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger;
  const config: SchedulerConfig = { ...DEFAULT_CONFIG, ...opts.config };
  const dataDir = opts.dataDir ?? path.resolve('.gaffer-data');
  const dbPath = opts.dbPath ?? path.join(dataDir, 'gaffer.db');
  const lock: WriterLock | undefined =
    (opts.singleWriter ?? true) && dbPath !== ':memory:' ? acquireWriterLock(path.dirname(dbPath), opts.nativeBinding) : undefined;

  let db: Db;
  try {
    db = openDatabase(dbPath, opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {});
  } catch (e) {
    lock?.release();
    throw e;
  }
  const events = new EventBus((e) => logger.error('event listener failed', { error: String(e) }));
  const store = new Store(db, events, (state, error) => {
    if (state === 'recovered') {
      logger.info(`storage accepts writes again (${dbPath})`);
      return;
    }
    const code = (error as { code?: string } | undefined)?.code ?? '';
    const hint = code.startsWith('SQLITE_FULL')
      ? 'free some disk space: writes resume by themselves'
      : 'the disk or the file is read-only or failing: fix it, then restart Gaffer';
    logger.error(`storage refused a write to ${dbPath} (${error?.message ?? 'unknown error'}): writes are refused with 503 unavailable, reads still work; ${hint}`, { code });
  }, !lock && dbPath !== ':memory:');
  const audit = new AuditLog(db, store, clock);
  const gaps = new GapDetector({ clock, store, audit, config, logger });
  // Core timers read the clocks before they act and decide after pending input (gap-detector invariant 4).
  const ctx: CoreContext = { db, store, audit, clock: gaps.wakeups, config, events, gaps };
  const repo = prepareTaskRepo(db);
  const idempotency = new IdempotencyStore(db, clock, () => config.idempotencyWindowS * 1000);
  const locks = new ClaimLocks(ctx, repo);
  const tasks = new Board(ctx, repo, locks, idempotency);
  const instances = new InstanceRegistry(ctx, locks);
  const tokens = new TokenStore(ctx);
  const watchdog = new Watchdog(ctx, locks, instances, idempotency, (e) =>
    logger.error('watchdog: sweep failed; retrying at the next sweep', { error: e instanceof Error ? e.message : String(e) }),
  );
  const committer = new GroupCommitter(store, opts.groupCommit);
  // The hub's timeouts (trigger acks, reconnect grace, hello, prechecks) count only time the server was there.
  const hub = new Hub({ clock: gaps.deadlines, config, db, events, audit, instances, locks, tasks, tokens, committer, logger }, opts.hub);
  const auditQuery = new AuditQuery(db);
  const signals = new Signals(ctx);
  // The inbox's sweep also looks at spend caps; the calendar lookup binds to the jobs module below.
  const sweeps: Array<{ name: string; run(): void }> = [];
  const attention = createAttention({ ctx, logger, calendarOf: (id) => jobs.repo.scheduleCalendar(id), sweeps, ...(opts.webhooks ? { webhooks: opts.webhooks } : {}) });
  const budgets = new Budgets(ctx, usageSpend(db), attention.inbox);
  const jobs = createJobs({ ctx, hub, signals, instances, logger, budgets });
  budgets.holdRun = (runId, message) => jobs.runner.holdForBudget(runId, message);
  sweeps.push({ name: 'spend caps', run: () => budgets.raiseReached() }, { name: 'per-run spend caps', run: () => void budgets.enforceRunCaps() });
  // A paused role, or a reached daily spend cap, hands out no task (P2: "no task").
  locks.gate = (role) => jobs.pauses.roleClosed(role) !== null || budgets.roleBlocked(role);
  // A decision on a held run acknowledges the inbox items about it, in the decision's transaction.
  jobs.approvals.listener = { decided: (subject, actor, note, decision) => void attention.inbox.resolveSubject(subject, actor, note, decision) };
  let closed = false;
  let graceSweep: TimerHandle | undefined;

  return {
    clock,
    config,
    db,
    dbPath,
    events,
    store,
    audit,
    tasks,
    locks,
    instances,
    tokens,
    watchdog,
    committer,
    hub,
    auditQuery,
    signals,
    jobs,
    gaps,
    attention,
    inbox: attention.inbox,
    budgets,
    logger,
    start() {
      // Sockets from a previous run are gone: their instances get the reconnect grace to resume
      // (keeping their locks), then the sweep below expires what nobody came back for.
      instances.disconnectAll('core restarted');
      gaps.start();
      watchdog.start();
      graceSweep = ctx.clock.setTimeout(() => {
        try {
          watchdog.sweep();
        } catch (e) {
          // Never fatal (e.g. a full disk): the periodic sweep does the same work next time.
          logger.error('watchdog: post-restart sweep failed; the periodic sweep will retry', { error: e instanceof Error ? e.message : String(e) });
        }
      }, config.reconnectGraceS * 1000 + 1);
      jobs.start();
      attention.start();
    },
    close() {
      if (closed) return;
      closed = true;
      gaps.stop();
      watchdog.stop();
      attention.stop();
      jobs.stop();
      hub.close();
      committer.close();
      graceSweep?.cancel();
      db.close();
      lock?.release();
    },
  };
}
