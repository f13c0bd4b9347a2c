/**
 * The composition root. The Electron main process and the headless server both call
 * `createCore`; nothing else constructs core services. The core's words (role, instance, task,
 * lock, fence, job, slot, run, attempt, offer, backfill, disposition, verdict, tick) are defined
 * once, in ./README.md.
 */
import path from 'node:path';
import { systemClock, type Clock, type TimerHandle } from '../common/clock';
import { DEFAULT_CONFIG, type SchedulerConfig } from '../common/config';
import { silentLogger, type Logger } from '../common/logger';
import { AuditLog } from './audit/audit-store';
import { AuditHeadFile, headRecordPath } from './audit/head-record';
import { AuditIntegrity } from './audit/integrity';
import { OperatorSettingsStore, TokenStore } from './auth';
import type { CoreContext } from './context';
import { closeDatabase, openDatabase, type Db } from './db/open';
import { Store, storageFailureHint } from './db/store';
import { STORAGE_CHECK_MS, StorageWatch } from './db/storage-watch';
import { acquireWriterLock, type WriterLock } from './db/writer-lock';
import { EventBus } from './events';
import { InstanceRegistry, prepareInstanceReads, type InstanceReads } from './instances';
import { Board, BulkTasks, ClaimLocks, IdempotencyStore, prepareTaskReads, prepareTaskRepo, TaskSearch, Watchdog, type ClaimGate, type TaskReads } from './tasks';
import { GroupCommitter, type GroupCommitOptions } from './db/group-commit';
import { Hub, type HubOptions, type LogSink } from './hub';
import { AuditQuery } from './audit/query-store';
import { AuditExporter } from './audit/export-thread';
import { verifyLiveRange, type LiveCheck } from './audit/audit-export';
import { prepareSignalReads, Signals, type SignalReads } from './signals';
import { createJobs, prepareRunReads, type DecisionListener, type JobService, type RunReads } from './jobs';
import { Rehearsal } from './jobs/rehearse';
import { createLogs, type LogService, type LogsOptions } from './logs';
import { GapDetector } from './time/gap-detector';
import { createAttention, createInbox, type Attention, type Inbox } from './inbox';
import { Budgets, Forecasts, LoopBreaker, PriceTable, prepareAttemptSpendReads, usageSpend, type AttemptSpendReads } from './budgets';
import type { WebhookOptions } from './notify';
import { ManagedAgents } from './managed';
import type { StorageStatus } from '../common/model';
import { fileKey, memoryKey, openSecrets, sealClearValues, type KeyProvider } from './secrets';
import { secureDataDir } from './db/data-dir';
import { Late, sealAll } from './wiring';

/** Read models of the modules' tables (the console, `GET /status`): the server runs no SQL of its own. */
export interface CoreReads {
  readonly tasks: TaskReads;
  readonly instances: InstanceReads;
  readonly runs: RunReads;
  readonly signals: SignalReads;
  /** A task's or run's latest attempt against its spend cap (core/budgets). */
  readonly attemptSpend: AttemptSpendReads;
}
import { assertVerifiable, createVerifications, type RunVerifyPort, type Verifications, type VerifyOptions } from './verify';

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
  /** How long a write waits for another process's transaction (default 5 s; only several writing processes wait). */
  busyTimeoutMs?: number;
  /** Agent hub limits and timeouts (hello timeout, rate limit, …). */
  hub?: HubOptions;
  /** Group commit tuning (batch cap); `{ maxBatch: 1 }` turns batching off, for comparison. */
  groupCommit?: GroupCommitOptions;
  /** Outbound webhook requests (timeout, user agent). */
  webhooks?: WebhookOptions;
  /** Where log lines are kept (default `<dataDir>/logs`, written by a worker thread). */
  logs?: LogsOptions;
  /** How often the database, WAL and lock files are checked for having been deleted or replaced when nothing is written (ms; default 5000; every commit looks at the database and WAL too). */
  storageCheckMs?: number;
  /**
   * Where the key of secrets at rest is kept (core/secrets): default the 0600 file `secrets.key`
   * in the data directory (a key in memory for a database in memory); the desktop shell passes
   * its OS keychain.
   */
  secretsKey?: KeyProvider;
  /** Verification of "done when…" checks (concurrency, where an attempt's workspace is). */
  verify?: VerifyOptions;
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
  /** One operator action over many tasks, chunked (core/tasks/bulk.ts). */
  readonly bulkTasks: BulkTasks;
  readonly locks: ClaimLocks;
  readonly instances: InstanceRegistry;
  readonly tokens: TokenStore;
  /** The operator's preferences ("Require a reason for actions"). */
  readonly operatorSettings: OperatorSettingsStore;
  readonly watchdog: Watchdog;
  /** Group commit: agent writes submitted in one event-loop turn share one transaction. */
  readonly committer: GroupCommitter;
  /** The agent hub (sessions, job_trigger / precheck pushes); transports attach to it. */
  readonly hub: Hub;
  /** Audit browser queries (filtering and paging over millions of rows). */
  readonly auditQuery: AuditQuery;
  /** The audit export as the server streams it: off the main thread for a database file. */
  readonly auditExport: AuditExporter;
  /** Readiness signals for business keys. */
  readonly signals: Signals;
  /** Central jobs: runner, runs, backfills, calendars, explain/preview/ledger. */
  readonly jobs: JobService;
  /** Rehearse a job (PROTOCOL §11): its five scenarios on the real engine in throw-away worlds; never touches this core's database. */
  readonly rehearsal: Rehearsal;
  /** Log lines and usage of attempts (PROTOCOL §5), kept apart from the audit chain. */
  readonly logs: LogService;
  /** Notices stalls, sleeps and clock steps once, and has every deadline shifted (`gaps.check()` on power resume). */
  readonly gaps: GapDetector;
  /** The operator's attention: inbox, its checks, notification settings and webhook deliveries. */
  readonly attention: Attention;
  /** `attention.inbox`: everything that needs the operator. */
  readonly inbox: Inbox;
  /** Daily spend caps (per role, global) and per-run caps, read from the usage ledger. */
  readonly budgets: Budgets;
  readonly prices: PriceTable;
  readonly forecasts: Forecasts;
  /** Managed agents: definitions; their processes run once a shell attaches a spawner (server/managed). */
  readonly managed: ManagedAgents;
  /** Verifies the hash chain of the live audit log over a range of ids (`after` < id < `before`; all by default). */
  verifyAudit(range?: { after?: number; before?: number }): Promise<LiveCheck>;
  /** Read models over the modules' tables, prepared once. */
  readonly reads: CoreReads;
  /** Done means verified (PROTOCOL §13): checks, their runner and each attempt's evidence. */
  readonly verify: Verifications;
  /** The audit log's check at start (triggers, tail, head record outside the database) and what it found. */
  readonly integrity: AuditIntegrity;
  /** Why the storage is not to be trusted right now (writes refused, or the audit log changed outside Gaffer), or null. */
  storageStatus(): StorageStatus | null;
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
  // PROTOCOL §17: the data directory is 0700 and its files 0600, including ones an older version left.
  if (dbPath !== ':memory:') secureDataDir(path.dirname(dbPath));
  const lock: WriterLock | undefined =
    (opts.singleWriter ?? true) && dbPath !== ':memory:' ? acquireWriterLock(path.dirname(dbPath), opts.nativeBinding) : undefined;

  let db: Db;
  try {
    // The only writer: a database another process still has open (a lock file deleted under a
    // running Gaffer) is refused rather than shared.
    db = openDatabase(dbPath, {
      ...(opts.nativeBinding ? { nativeBinding: opts.nativeBinding } : {}),
      ...(opts.busyTimeoutMs !== undefined ? { busyTimeoutMs: opts.busyTimeoutMs } : {}),
      refuseIfOpenElsewhere: lock !== undefined,
    });
  } catch (e) {
    lock?.release();
    throw e;
  }
  let secrets;
  try {
    // Before any service reads a secret: a missing or wrong key is a clear error here (core/secrets).
    secrets = openSecrets(db, opts.secretsKey ?? (dbPath === ':memory:' ? memoryKey() : fileKey(path.dirname(dbPath))));
  } catch (e) {
    closeDatabase(db, dbPath, { clean: true });
    lock?.release();
    throw e;
  }
  const events = new EventBus((e) => logger.error('event listener failed', { error: String(e) }));
  const store = new Store(
    db,
    events,
    (state, error, fault) => {
      if (state === 'recovered') logger.info(`storage accepts writes again (${dbPath})`);
      else if (state === 'fault') logger.error(`storage fault: ${fault!.message}; writes are refused with 503 unavailable until Gaffer is restarted, reads still work`);
      else logger.error(`storage refused a write to ${dbPath} (${error?.message ?? 'unknown error'}): writes are refused with 503 unavailable, reads still work; ${storageFailureHint(error)}`, { code: (error as { code?: string } | undefined)?.code ?? '' });
    },
    !lock && dbPath !== ':memory:',
    () => clock.now(),
  );
  if (dbPath !== ':memory:') store.watchStorage(new StorageWatch(db, { dbPath, ...(lock ? { lockPath: lock.path } : {}), now: () => clock.now() }));
  const audit = new AuditLog(db, store, clock);
  const gaps = new GapDetector({ clock, store, audit, config, logger });
  // Core timers read the clocks before they act and decide after pending input (gap-detector invariant 4).
  const ctx: CoreContext = { db, store, audit, clock: gaps.wakeups, config, events, gaps };
  const repo = prepareTaskRepo(db);
  const idempotency = new IdempotencyStore(db, clock, () => config.idempotencyWindowS * 1000);
  // The needs that run against the build order below (core/wiring.ts): each filled by the module
  // that provides it, all sealed before createCore returns; one left unfilled fails here.
  const claimGate = new Late<ClaimGate>('a claim gate (role pauses, daily spend caps)', 'the task board');
  const logSink = new Late<LogSink>('a sink for log and usage frames', 'the agent hub');
  const holdRun = new Late<(runId: string, message: string) => boolean>("a hold of a run's attempt", 'the budgets');
  const runsToVerify = new Late<RunVerifyPort>('the verifying run attempts (read and settle)', 'the verification of job runs');
  // The inbox before the modules that raise items in it (verification, the loop breaker, the audit check, the budgets, the jobs module).
  const inboxPart = createInbox({ ctx, logger, secrets, ...(opts.webhooks ? { webhooks: opts.webhooks } : {}) });
  const { inbox } = inboxPart;
  // Done means verified (PROTOCOL §13): before the board, which hands reported tasks to it and
  // shows each task's latest evidence, and the jobs module, which hands it reported runs.
  const verify = createVerifications({ ctx, repo, inbox, logger, jobs: runsToVerify }, opts.verify);
  // The same error attempt after attempt stops the retries (PROTOCOL §14), in the report's transaction.
  // N (the jobs settings row, one setting for tasks and job runs) is read at each failure, once the core stands.
  const sameErrorTimes = new Late<() => number>("the loop breaker's count (a setting)", 'the loop breaker');
  const breaker = new LoopBreaker(ctx, inbox, () => sameErrorTimes.get()());
  const locks = new ClaimLocks(ctx, repo, claimGate, (task, status, note) => breaker.taskReported(task, status, note), verify.tasks);
  const taskSearch = new TaskSearch(db);
  // PROTOCOL §16: the session an answered task or run resumes, from the logs module's artifacts (built later).
  const sessionOf = new Late<(subject: string) => string | undefined>('the CLI session of an attempt (stored artifacts)', 'the task board and the run approvals');
  const tasks = new Board(ctx, repo, locks, idempotency, taskSearch, { assertVerifiable, latest: (subject) => verify.latest(subject) }, sessionOf);
  const bulkTasks = new BulkTasks(ctx, tasks, taskSearch);
  const instances = new InstanceRegistry(ctx, locks);
  const tokens = new TokenStore(ctx);
  const operatorSettings = new OperatorSettingsStore(ctx);
  const watchdog = new Watchdog(ctx, locks, instances, idempotency, (e) =>
    logger.error('watchdog: sweep failed; retrying at the next sweep', { error: e instanceof Error ? e.message : String(e) }),
  );
  const committer = new GroupCommitter(store, opts.groupCommit);
  // The hub's timeouts (trigger acks, reconnect grace, hello, prechecks) count only time the server was there.
  const hub = new Hub({ clock: gaps.deadlines, config, db, events, audit, instances, locks, tasks, tokens, committer, logger, logSink }, opts.hub);
  const auditQuery = new AuditQuery(db);
  const auditExport = new AuditExporter(auditQuery, { dbPath, nativeBinding: opts.nativeBinding });
  const signals = new Signals(ctx);
  // As soon as the inbox can take its finding: was the audit log changed while Gaffer was not running?
  const headFile = dbPath === ':memory:' ? undefined : new AuditHeadFile(headRecordPath(dbPath));
  const integrity = new AuditIntegrity({ db, store, audit, inbox, clock, logger, ...(headFile ? { headFile } : {}) });
  integrity.checkAtStart();
  const spendSource = usageSpend(db);
  const budgets = new Budgets(ctx, spendSource, inbox, { run: holdRun, task: (taskId, note, detail) => locks.takeForBudgetTx(taskId, note, detail) });
  // A decision on a held run acknowledges the inbox items about it, in the decision's transaction.
  const decisions: DecisionListener = { decided: (subject, actor, note, decision) => void inbox.resolveSubject(subject, actor, note, decision) };
  const jobs = createJobs({ ctx, hub, signals, instances, logger, budgets, decisions, verify: verify.tasks, breaker, sessionOf });
  holdRun.provide((runId, message) => jobs.holdForBudget(runId, message), 'the jobs module');
  runsToVerify.provide(jobs, 'the jobs module');
  sameErrorTimes.provide(() => jobs.settings().loopBreaker.sameErrorTimes, 'the jobs module');
  // A paused role, or a reached daily spend cap, hands out no task (P2: "no task").
  claimGate.provide((role) => jobs.pauses.roleClosed(role) !== null || budgets.roleBlocked(role), 'the jobs module and the budgets');
  // The inbox's sweep also looks at spend caps.
  const attention = createAttention(inboxPart, {
    ctx,
    logger,
    planOf: (spec) => jobs.planOfSpec(spec),
    sweeps: [
      { name: 'spend caps', run: () => budgets.raiseReached() },
      { name: 'per-run spend caps', run: () => void budgets.enforceRunCaps() },
      { name: 'per-task spend caps', run: () => void budgets.enforceTaskCaps() },
    ],
  });
  const rehearsal = new Rehearsal({ calendar: (id) => jobs.listCalendars().find((c) => c.id === id), config, now: () => clock.now(), sameErrorTimes: () => jobs.settings().loopBreaker.sameErrorTimes });
  const prices = new PriceTable(ctx);
  const forecasts = new Forecasts(db, {
    now: () => clock.now(),
    job: (id) => jobs.get(id),
    jobs: () => {
      const out = [];
      for (let page = jobs.list({ limit: 500 }); ; ) {
        out.push(...page.items.map((s) => jobs.get(s.id)));
        if (page.next === null || page.items.length === 0) return out;
        page = jobs.list({ limit: 500, after: page.next });
      }
    },
    planOf: (job) => jobs.planOfSpec(job),
  });
  // Each usage report is measured against the caps in its own transaction (a run past its cap stops
  // before anything sent behind the report; the next claim sees a daily cap it reached).
  const logs = createLogs(
    { ctx, committer, logger, jobs, price: (model, t) => prices.price(model, t), nativeBinding: opts.nativeBinding, dbPath, dir: path.join(path.dirname(dbPath === ':memory:' ? path.join(dataDir, 'x') : dbPath), 'logs'), usageListener: (u) => budgets.usageRecorded(u) },
    opts.logs,
  );
  logSink.provide(logs, 'the logs module');
  sessionOf.provide((subject) => logs.latestSession(subject), 'the logs module');
  const managed = new ManagedAgents(ctx, tokens, logger, secrets);
  // Values an earlier version stored in clear are sealed now, once (core/secrets invariant 2).
  const sealed = sealClearValues(db, () =>
    store.write(() => {
      const n = { webhookUrls: attention.notifications.sealClearValues(), managedEnvs: managed.store.sealClearValues() };
      if (n.webhookUrls + n.managedEnvs > 0) audit.append({ type: 'secrets.sealed', actor: 'gaffer', subject: 'settings:secrets', detail: n });
      return n;
    }),
  );
  if (sealed.webhookUrls + sealed.managedEnvs > 0) logger.info(`sealed ${sealed.webhookUrls} webhook URL(s) and ${sealed.managedEnvs} managed agent environment(s) stored in clear by an earlier version`);
  try {
    sealAll([claimGate, logSink, holdRun, inboxPart.snoozed, runsToVerify, sameErrorTimes, sessionOf]);
  } catch (e) {
    // A contribution nobody provided is a fault of this assembly: nothing starts, nothing is left open.
    void logs.close();
    attention.stop();
    verify.stop();
    closeDatabase(db, dbPath, { clean: true });
    headFile?.close();
    lock?.release();
    throw e;
  }
  let closed = false;
  let graceSweep: TimerHandle | undefined;
  let storageTimer: TimerHandle | undefined;
  const storageCheckMs = opts.storageCheckMs ?? STORAGE_CHECK_MS;
  const checkStorage = () => {
    storageTimer = undefined;
    // A fault is sticky (store.ts, invariant 6): once declared there is nothing left to watch.
    if (dbPath !== ':memory:' && store.checkStorage()) storageTimer = clock.setTimeout(checkStorage, storageCheckMs);
  };

  return {
    clock,
    config,
    db,
    dbPath,
    events,
    store,
    audit,
    tasks,
    bulkTasks,
    locks,
    instances,
    tokens,
    operatorSettings,
    watchdog,
    committer,
    hub,
    auditQuery,
    auditExport,
    signals,
    jobs,
    rehearsal,
    logs,
    gaps,
    attention,
    inbox: attention.inbox,
    budgets,
    prices,
    forecasts,
    managed,
    verify,
    integrity,
    verifyAudit: (range) => verifyLiveRange(db, range),
    reads: { tasks: prepareTaskReads(db), instances: prepareInstanceReads(db), runs: prepareRunReads(db), signals: prepareSignalReads(db), attemptSpend: prepareAttemptSpendReads(db, spendSource) },
    storageStatus: () => store.status() ?? integrity.status(),
    logger,
    start() {
      // Sockets from a previous run are gone: their instances get the reconnect grace to resume
      // (keeping their locks), then the sweep below expires what nobody came back for.
      instances.disconnectAll('core restarted');
      gaps.start();
      watchdog.start();
      checkStorage();
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
      logs.start();
      verify.start();
    },
    close() {
      if (closed) return;
      closed = true;
      gaps.stop();
      watchdog.stop();
      verify.stop();
      attention.stop();
      jobs.stop();
      hub.close();
      instances.stop();
      void logs.close(); // the worker finishes the batch in flight; `logs.close()` tells when it is done
      committer.close();
      graceSweep?.cancel();
      storageTimer?.cancel();
      closeDatabase(db, dbPath, { clean: store.fault === undefined });
      headFile?.close();
      lock?.release();
    },
  };
}
