/** Logs and usage (PROTOCOL §5): built once by createCore. */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { GroupCommitter } from '../db/group-commit';
import type { JobService } from '../jobs';
import type { DiskReading } from './admission';
import { inlineEngine, type LogEngine } from './engine';
import { ArtifactStore } from './artifact-store';
import { holderCheck } from './holders';
import { LogStore } from './log-store';
import { prepareRunDescriptions, prepareTokenOfInstance } from './store';
import { LogService, type LogServiceDeps, type LogServiceOptions, type UsageRecorded } from './service';
import { UsageLedger } from './usage-store';
import { startWorkerEngine } from './worker-engine';

export { LogService, LOG_SETTINGS_KEY } from './service';

export interface LogsOptions extends LogServiceOptions {
  /** Directory of the segment files (default `<dataDir>/logs`). */
  dir?: string;
  /** Run the store on this thread instead of a worker (tests, tools). */
  inline?: boolean;
  /** Segment rotation (defaults: 64 MiB, one day). */
  segmentMaxBytes?: number;
  segmentMaxAgeMs?: number;
  /** The log worker's nice value on Linux (default 10; 0 leaves it as the process): see worker.ts. */
  workerNice?: number;
  /**
   * Linux: the log worker runs in SCHED_IDLE (default false; worker-thread.ts `idleThisThread`), so
   * any thread that wakes — the claim thread, an agent's process in another session — takes its CPU
   * at once. Off by default: on a machine saturated by other work the worker then gets next to no
   * CPU, and an agent that awaits its log acknowledgements (the SDK's `ctx.log`) waits with it
   * (bench/REPORT.md, "flood3": not measured yet on a quiet machine, where it would have to pay).
   */
  workerSchedIdle?: boolean;
  /** Reads the free disk space and the database's size (default: statfs and stat; tests inject it). */
  disk?: () => DiskReading;
}

/** Weight 110 against the claim thread's 1024: a flood of lines gives way to claims on a busy CPU. */
const LOG_WORKER_NICE = 10;

export interface LogsDeps {
  ctx: CoreContext;
  committer: GroupCommitter;
  logger: Logger;
  jobs: JobService;
  nativeBinding?: string | undefined;
  dir: string;
  /** The main database (its size is part of the free-space floor), or ':memory:'. */
  dbPath: string;
  /** Each usage report, in its transaction (the budgets module's spend caps). */
  usageListener: (u: UsageRecorded) => void;
  /** Prices tokens of a model (the price table, core/budgets/prices.ts). */
  price?: LogServiceDeps['price'];
}

const fileBytes = (f: string) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0;

/** Free bytes on the file system that holds `dir` (or its nearest existing parent), for an unprivileged writer. */
function freeBytes(dir: string): number {
  let p = path.resolve(dir);
  while (!fs.existsSync(p) && path.dirname(p) !== p) p = path.dirname(p);
  const st = fs.statfsSync(p);
  return st.bavail * st.bsize;
}

function diskReading(dir: string, dbPath: string): DiskReading {
  const dbBytes = dbPath === ':memory:' ? 0 : fileBytes(dbPath) + fileBytes(`${dbPath}-wal`);
  return { freeBytes: freeBytes(dir), dbBytes };
}

export function createLogs(deps: LogsDeps, opts: LogsOptions = {}): LogService {
  const { ctx, logger } = deps;
  const dir = opts.dir ?? deps.dir;
  const bad = (files: string[]) => logger.error(`logs: ${files.length} segment file(s) could not be read and were moved aside: ${files.join('; ')}`);
  const storeOpts = {
    ...(deps.nativeBinding ? { nativeBinding: deps.nativeBinding } : {}),
    ...(opts.segmentMaxBytes ? { segmentMaxBytes: opts.segmentMaxBytes } : {}),
    ...(opts.segmentMaxAgeMs ? { segmentMaxAgeMs: opts.segmentMaxAgeMs } : {}),
  };
  let engine: LogEngine;
  if (opts.inline) {
    let inner: LogEngine | undefined;
    const lazy = () => (inner ??= inlineEngine(new LogStore(dir, ctx.clock.now(), { ...storeOpts, onBadSegment: (f, e) => bad([`${f}: ${e}`]) })));
    engine = { call: (op, args) => lazy().call(op, args), close: async () => inner?.close() };
  } else {
    engine = startWorkerEngine({
      dir,
      now: () => ctx.clock.now(),
      nice: opts.workerNice ?? LOG_WORKER_NICE,
      schedIdle: opts.workerSchedIdle ?? false,
      ...storeOpts,
      onBadSegments: bad,
      onExit: (why) => logger.error(`logs: the log worker stopped (${why}); it restarts on the next log frame`),
    });
  }
  const runDescriptions = prepareRunDescriptions(ctx.db);
  const tokenOf = prepareTokenOfInstance(ctx.db);
  return new LogService(
    {
      db: ctx.db,
      store: ctx.store,
      audit: ctx.audit,
      clock: ctx.clock,
      logger,
      committer: deps.committer,
      engine,
      holders: holderCheck(ctx.db, () => deps.jobs),
      ledger: new UsageLedger(ctx.db),
      artifacts: new ArtifactStore(ctx.db),
      emitAppended: (e) => {
        if (ctx.events.has('log.appended')) ctx.events.emit({ type: 'log.appended', ...e });
      },
      describeRun: (id) => runDescriptions.get(id) ?? null,
      tokenOf: (id) => tokenOf.get(id)?.token_id ?? null,
      disk: opts.disk ?? (() => diskReading(dir, deps.dbPath)),
      onUsageRecorded: deps.usageListener,
      price: deps.price,
      hasStoredLogs: () => fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.startsWith('seg-')),
    },
    opts,
  );
}
