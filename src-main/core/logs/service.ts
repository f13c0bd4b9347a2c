/**
 * Logs and usage (PROTOCOL §5): the `log` and `usage` frames, the reads behind the HTTP API and
 * the console, retention, and the settings row `logs.settings`.
 *
 * Invariants:
 * 1. Only the holder logs or reports usage (holders.ts); the check is a read on this thread and
 *    the write happens off it: log lines go to the log worker, never into the main database's
 *    commits, so a flood of lines never makes a claim wait for a disk write.
 * 2. A `log` frame is answered only once the batch holding it has committed in its segment: an
 *    acknowledged line is on disk. Frames that arrive while a batch is being written form the
 *    next batch (no timer: the batch size follows the load), in arrival order.
 * 3. Back-pressure: past `maxQueuedChars` of frames waiting to be written, a frame is refused
 *    with `rate_limited` and nothing of it is stored (the SDK waits for its acknowledgements and
 *    resends; its per-line `seq` makes a resend harmless). Before it is queued, a frame must also
 *    pass its sender's token rate and the disk's free-space floor (admission.ts); the total the
 *    logs take is kept by the store as lines are written (log-store invariant 6), one batch being
 *    at most a sixteenth of that total.
 * 4. Usage is an increment in the main database (`usage-ledger.ts`), through the group commit.
 *    Its listener (the spend caps) runs in the same transaction, right after the row is added:
 *    what the report changes (a cap reached, work taken away) is decided before any request
 *    behind it in the same commit is applied. The listener's writes roll back alone if it fails;
 *    the report is kept.
 * 5. A frame the hub hands over as text (`logText`: its header read, not parsed) costs this thread
 *    only the holder check: the worker parses and checks its lines (frame-text.ts). A frame whose
 *    header does not read cleanly, or whose sender the holder check refuses, is left to the parsed
 *    path, which answers it as before; one refused by invariant 3 is answered at once, unparsed
 *    (a flood of refused frames costs no parsing here).
 * 6. A frame the hub hands over as its bytes (`logBytes`) is not even decoded on this thread: its
 *    header is read from its first bytes, and the worker decodes, parses and checks the rest. A
 *    frame whose header is not in its first bytes is decoded here and goes on as invariant 5 says.
 *    The bytes are copied to the worker (postMessage), never transferred: detaching any buffer
 *    makes V8 check for detached buffers in every typed-array loop of this thread from then on
 *    (`ws` unmasking each frame byte by byte ran ~2× slower in the flood profile).
 */
import type { Clock, TimerHandle } from '../../common/clock';
import { GafferError } from '../../common/errors';
import { decodeUtf8 } from '../../common/text';
import type { Logger } from '../../common/logger';
import {
  DEFAULT_LOG_SETTINGS,
  LOG_SETTINGS_LIMITS,
  type CostlyRun,
  type DailyUsage,
  type LogAttempt,
  type LogPage,
  type LogSettings,
  type LogStorageStats,
  type UsageGroup,
  type UsageRow,
  type UsageTotals,
} from '../../common/logs';
import { MAX_FRAME_BYTES, type AgentRequestOf, type ArtifactResult, type LogResult, type UsageResult } from '../../common/protocol';
import type { AuditLog } from '../audit/audit-store';
import type { GroupCommitter } from '../db/group-commit';
import type { Db } from '../db/open';
import type { Store } from '../db/store';
import { LogAdmission, type DiskReading } from './admission';
import { packBatch, type EngineOps, type IngestOutcome, type LogEngine } from './engine';
import { readId, type WireId } from '../hub';
import { REPEATED_HEADER, repeatedLogHeaderKey, scanLogFrameHeader, type LogFrameHeader } from './frame-header';
import type { LogFrameText } from './frame-text';
import { prepareLogSettingsStatements } from './store';
import type { ArtifactRecord, ArtifactStore, ChangeSummary } from './artifact-store';
import { EXACTLY_ONE_SUBJECT, type HeldWork, type HolderCheck } from './holders';
import type { AppendEntry, ReadQuery, SearchHit } from './log-store';
import type { UsageLedger } from './usage-store';
import type { PricedTokens } from '../../common/prices';

export const LOG_SETTINGS_KEY = 'logs.settings';

/** Appends must pause this long before the word index is filled … */
const INDEX_PAUSE_MS = 1000;
/** … this many lines per step. */
const INDEX_CHUNK = 5000;

export interface LogServiceDeps {
  db: Db;
  store: Store;
  audit: AuditLog;
  clock: Clock;
  logger: Logger;
  committer: GroupCommitter;
  engine: LogEngine;
  holders: HolderCheck;
  ledger: UsageLedger;
  /** PROTOCOL §15: what attempts produced. */
  artifacts: ArtifactStore;
  emitAppended: (e: { subject: string; attempt: number; lastSeq: number }) => void;
  /** True when segment files exist (retention has something to do before the first new line). */
  hasStoredLogs: () => boolean;
  /** Run descriptions for "most expensive runs". */
  describeRun: (runId: string) => { job: string; slot: string } | null;
  /** The agent token an instance said hello with (its log rate is the token's), or null. */
  tokenOf: (instanceId: string) => string | null;
  /** Free space where the logs are, and the main database's size (admission.ts invariant 2). */
  disk: () => DiskReading;
  /**
   * Told of each usage report inside its transaction (the spend caps, core/budgets; invariant 4),
   * with its cost in nano-dollars as stored; never fails the report.
   */
  onUsageRecorded: (u: UsageRecorded) => void;
  /** Dollars for a report's tokens of `model` from the price table (PROTOCOL §14), undefined when no row prices it. */
  price?: ((model: string, t: PricedTokens) => number | undefined) | undefined;
}

export interface LogServiceOptions {
  /** Characters of frames waiting to be written above which frames are refused (default 64 Mi). */
  maxQueuedChars?: number;
  /** Most characters of frames in one write (default 8 Mi); more wait for the next. */
  maxBatchChars?: number;
  /** Retention sweep cadence (default hourly; the first runs at start). */
  sweepEveryMs?: number;
  /** How to defer a flush to the end of the current turn (default `setImmediate`). */
  schedule?: (fn: () => void) => void;
}

/** A frame waiting for the worker: parsed here (`entry`) or as its text (`text`). */
interface Queued {
  entry?: AppendEntry;
  text?: LogFrameText;
  /** Its share of the queue bound: the frame's characters. */
  chars: number;
  resolve: (o: IngestOutcome) => void;
  reject: (e: unknown) => void;
}

/**
 * Invariant 6: the first bytes of a frame its header is read from. The SDK's header (`id`, `type`,
 * `taskId`/`runId`, `fence`) is well under 200 bytes; a frame whose lines start later is decoded
 * whole on the main thread as before.
 */
export const HEADER_WINDOW_BYTES = 1024;

/** Characters a parsed line stands for in the queue bound (its text and its JSON around it). */
const LINE_OVERHEAD_CHARS = 64;
const MIB = 1024 * 1024;
/** Invariant 3: a batch is at most this share of the total the logs may take (log-store invariant 6). */
const BATCH_SHARE_OF_TOTAL = 16;
const WRITER_BEHIND = 'the log writer is behind: wait for the acknowledgements of the lines already sent, then resend';

/** One usage report as it was just added: whose, and its cost as stored (nano-dollars). */
export interface UsageRecorded {
  subject: string;
  attempt: number;
  role: string;
  costNusd: number;
  /** Tokens the report added (negative for a final report below the estimate). */
  tokens: number;
  at: number;
  /** The attempt's totals with this report (the ledger's running total): the caps need no sum of their own. */
  attemptTotals: UsageTotals;
}

type LogFrame = AgentRequestOf<'log'>;
type UsageFrame = AgentRequestOf<'usage'>;

/** Parses the settings row, keeping defaults for anything missing or out of range. */
export function parseLogSettings(text: string | undefined): LogSettings {
  const out = { ...DEFAULT_LOG_SETTINGS };
  if (!text) return out;
  try {
    const v = JSON.parse(text) as Partial<Record<keyof LogSettings, unknown>>;
    for (const k of Object.keys(LOG_SETTINGS_LIMITS) as Array<keyof LogSettings>) {
      const n = v[k];
      const { min, max } = LOG_SETTINGS_LIMITS[k];
      if (typeof n === 'number' && Number.isFinite(n) && n >= min && n <= max) out[k] = n;
    }
  } catch {
    // a damaged row reads as the defaults; the next save rewrites it
  }
  return out;
}

export class LogService {
  private queue: Queued[] = [];
  private queuedChars = 0;
  private writing = false;
  private scheduled = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  private started = false;
  private indexTimer: TimerHandle | undefined;
  private batchesSinceIndex = 0;
  /** The batch being written, if any. */
  private current: Promise<void> | undefined;
  private sweepTimer: TimerHandle | undefined;
  private cached: LogSettings | undefined;
  private readonly maxQueuedChars: number;
  private readonly maxBatchChars: number;
  private readonly sweepEveryMs: number;
  private readonly schedule: (fn: () => void) => void;
  private readonly q;
  private readonly admission: LogAdmission;
  /**
   * Lines written so far (for the bench and /status); `textFrames`: frames the worker parsed
   * (invariant 5); `byteFrames`: frames taken as bytes, never decoded on this thread (invariant 6).
   */
  readonly stats = { frames: 0, lines: 0, batches: 0, refused: 0, textFrames: 0, byteFrames: 0 };

  constructor(
    private readonly d: LogServiceDeps,
    opts: LogServiceOptions = {},
  ) {
    this.maxQueuedChars = opts.maxQueuedChars ?? 64 * 1024 * 1024;
    this.maxBatchChars = opts.maxBatchChars ?? 8 * 1024 * 1024;
    this.sweepEveryMs = opts.sweepEveryMs ?? 3600_000;
    this.schedule = opts.schedule ?? ((fn) => void setImmediate(fn));
    this.admission = new LogAdmission({ clock: d.clock, logger: d.logger, settings: () => this.settings(), disk: d.disk });
    this.q = prepareLogSettingsStatements(d.db);
  }

  // ---- settings ---------------------------------------------------------------------------

  settings(): LogSettings {
    return (this.cached ??= parseLogSettings(this.q.get.get(LOG_SETTINGS_KEY)?.value));
  }

  /** Changes caps or retention (audited `logs.settings`); a lower retention applies at once. */
  setSettings(patch: Partial<LogSettings>, opts: { actor: string; reason: string }): LogSettings {
    const next = { ...this.settings() };
    for (const [k, v] of Object.entries(patch) as Array<[keyof LogSettings, number | undefined]>) {
      if (v === undefined) continue;
      const lim = LOG_SETTINGS_LIMITS[k];
      if (!lim) throw new GafferError('bad_request', `unknown log setting "${k}"`);
      if (!Number.isFinite(v) || v < lim.min || v > lim.max) throw new GafferError('bad_request', `${k} must be between ${lim.min} and ${lim.max}`, { field: k });
      next[k] = v;
    }
    this.d.store.write(() => {
      this.q.put.run(LOG_SETTINGS_KEY, JSON.stringify(next));
      this.d.audit.append({ type: 'logs.settings', actor: opts.actor, subject: 'logs', detail: { ...next, reason: opts.reason } });
    });
    this.cached = next;
    this.admission.reset();
    void this.sweep();
    return next;
  }

  // ---- frames ------------------------------------------------------------------------------

  private held(instanceId: string, frame: { taskId?: number | undefined; runId?: string | undefined; fence?: number | undefined }): HeldWork {
    if ((frame.taskId === undefined) === (frame.runId === undefined)) {
      throw new GafferError('bad_request', EXACTLY_ONE_SUBJECT, { field: frame.taskId === undefined ? 'taskId' : 'runId' });
    }
    return frame.taskId !== undefined ? this.d.holders.task(instanceId, frame.taskId, frame.fence) : this.d.holders.run(instanceId, frame.runId!);
  }

  /** `log`: stores the frame's lines for the sender's attempt; resolves once they are on disk. */
  async log(instanceId: string, frame: LogFrame): Promise<LogResult> {
    if (this.closed) throw new GafferError('unavailable', 'the scheduler is shutting down');
    const work = this.held(instanceId, frame);
    let chars = 0;
    for (const l of frame.lines) chars += l.text.length + LINE_OVERHEAD_CHARS;
    this.admit(instanceId, chars);
    const now = this.d.clock.now();
    const lines = frame.lines.map((l) => ({ text: l.text, stream: l.stream, level: l.level, seq: l.seq, at: l.at === undefined ? now : Date.parse(l.at), kind: l.kind, data: l.data }));
    return this.answer(work, await this.enqueue({ entry: { subject: work.subject, attempt: work.attempt, lines }, chars }));
  }

  /**
   * Invariant 5: a frame as its text, before anyone parsed it. Taken when it is a `log` frame
   * whose header reads cleanly (frame-header.ts) and whose sender holds the work (then queued, or
   * refused by invariant 3); undefined otherwise (not a log frame, not the holder, Gaffer
   * closing): the parsed path then answers it exactly as it always did.
   */
  logText(instanceId: string, text: string): { id: WireId; result: Promise<LogResult> } | undefined {
    if (this.closed) return undefined;
    const header = scanLogFrameHeader(text);
    if (!header) return this.repeatedHeader(text);
    return this.takeUnparsed(instanceId, header, { text }, text.length);
  }

  /**
   * Invariant 6: a frame as its UTF-8 bytes, before anyone decoded them. Its header is read from its
   * first HEADER_WINDOW_BYTES (the SDK writes it before the lines); then it is taken as `logText`
   * takes a frame and only the worker decodes it. Undefined when the header is not there, the frame
   * is not a log frame, or the sender does not hold the work: the hub then decodes the frame and
   * goes on as for any text frame (`logText` first), so such a frame is answered exactly as before.
   */
  logBytes(instanceId: string, bytes: Uint8Array): { id: WireId; result: Promise<LogResult> } | undefined {
    if (this.closed) return undefined;
    // Values before the `lines` key are whole in the window (something follows them in it), so
    // the header read from it is the one the whole text gives (frame-header invariants 1-2).
    const header = scanLogFrameHeader(decodeUtf8(bytes.subarray(0, HEADER_WINDOW_BYTES)));
    if (!header) return undefined;
    return this.takeUnparsed(instanceId, header, { bytes }, bytes.length);
  }

  /** Invariant 5: a frame whose header reads cleanly; the holder check, admission, then the worker's queue. */
  private takeUnparsed(
    instanceId: string,
    header: LogFrameHeader,
    body: { text: string } | { bytes: Uint8Array },
    chars: number,
  ): { id: WireId; result: Promise<LogResult> } | undefined {
    let work: HeldWork;
    try {
      work = this.held(instanceId, header);
    } catch {
      return undefined;
    }
    try {
      this.admit(instanceId, chars);
    } catch (e) {
      return { id: header.id, result: Promise.reject(e) };
    }
    const frame: LogFrameText = { ...body, header, subject: work.subject, attempt: work.attempt, receivedAt: this.d.clock.now(), lockFence: work.fence };
    const result = this.enqueue({ text: frame, chars }).then((o) => {
      const r = this.answer(work, o);
      this.stats.textFrames++;
      if (frame.bytes) this.stats.byteFrames++;
      return r;
    });
    return { id: header.id, result };
  }

  /**
   * Invariant 3: a frame of `chars` may be queued, or the refusal is thrown (nothing of it is
   * stored): the writer is behind, the sender's token is over its rate, or the disk is at its floor.
   */
  private admit(instanceId: string, chars: number): void {
    try {
      if (this.queuedChars + chars > this.maxQueuedChars) throw new GafferError('rate_limited', WRITER_BEHIND);
      // A frame is at most MAX_FRAME_BYTES on the wire, whatever the queue's per-line estimate says.
      this.admission.admit(this.d.tokenOf(instanceId) ?? `instance:${instanceId}`, Math.min(chars, MAX_FRAME_BYTES));
    } catch (e) {
      this.stats.refused++;
      throw e;
    }
  }

  /** Why log frames are refused for lack of disk space right now, or null (`GET /status`). */
  refusing() {
    return this.admission.refusing();
  }

  /**
   * A log frame that names a header key twice with different values is refused whole, before
   * anything else (frame-header invariant 4): the parsed path would silently take the last one.
   */
  private repeatedHeader(text: string): { id: WireId; result: Promise<LogResult> } | undefined {
    const r = repeatedLogHeaderKey(text);
    if (!r) return undefined;
    return { id: readId({ id: r.id }), result: Promise.reject(new GafferError('bad_request', `${REPEATED_HEADER}: "${r.key}"`, { field: r.key })) };
  }

  private answer(work: HeldWork, outcome: IngestOutcome): LogResult {
    if (!outcome.ok) throw new GafferError(outcome.code ?? 'bad_request', outcome.message, outcome.field === undefined ? undefined : { field: outcome.field });
    this.stats.frames++;
    this.stats.lines += outcome.stored;
    if (outcome.stored > 0) this.d.emitAppended({ subject: work.subject, attempt: work.attempt, lastSeq: outcome.lastSeq });
    return {
      accepted: outcome.lines,
      stored: outcome.stored,
      duplicates: outcome.duplicates,
      dropped: outcome.dropped,
      truncated: outcome.truncated,
      lastSeq: outcome.clientSeq,
    };
  }

  /** `usage`: adds the increments to the sender's attempt; resolves with its running total. */
  async usage(instanceId: string, frame: UsageFrame): Promise<UsageResult> {
    const work = this.held(instanceId, frame);
    const at = this.d.clock.now();
    // PROTOCOL §14: tokens and a model but no cost are priced here, from the table (an estimate).
    const priced = frame.costUsd === undefined && frame.model !== undefined && (frame.inputTokens || frame.outputTokens) ? this.d.price?.(frame.model, frame) : undefined;
    const totals = await this.d.committer.submit(() =>
      this.d.store.write(() => {
        const added = this.d.ledger.record({
          subject: work.subject,
          attempt: work.attempt,
          role: work.role,
          jobId: work.jobId,
          instanceId,
          model: frame.model,
          inputTokens: frame.inputTokens,
          outputTokens: frame.outputTokens,
          costUsd: frame.costUsd ?? priced,
          cacheReadTokens: frame.cacheReadTokens,
          cacheWriteTokens: frame.cacheWriteTokens,
          estimated: frame.estimated ?? priced !== undefined,
          final: frame.final,
          at,
        });
        this.usageRecorded({ subject: work.subject, attempt: work.attempt, role: work.role, costNusd: added.costNusd, tokens: added.tokens, at, attemptTotals: added.totals });
        return added.totals;
      }),
    );
    return { usage: totals };
  }

  /**
   * `artifact` (PROTOCOL §15): stored with the sender's attempt (artifacts.ts), through the group
   * commit; answered once durable. Only the holder may send one, as for `usage`.
   */
  async artifact(instanceId: string, frame: AgentRequestOf<'artifact'>): Promise<ArtifactResult> {
    const work = this.held(instanceId, frame);
    const at = this.d.clock.now();
    const r = await this.d.committer.submit(() =>
      this.d.store.write(() =>
        this.d.artifacts.put({ subject: work.subject, attempt: work.attempt, kind: frame.kind, name: frame.name, data: frame.data, diff: frame.diff, diffOffset: frame.diffOffset, at }),
      ),
    );
    return { accepted: true, ...r };
  }

  /**
   * PROTOCOL §16: the CLI conversation to resume when the operator answers `subject` — the session
   * its latest attempt reported — from the server's store, so it survives an agent restart.
   */
  latestSession(subject: string): string | undefined {
    return this.d.artifacts.latestSession(subject);
  }

  artifactsOf(subject: string): ArtifactRecord[] {
    return this.d.artifacts.list(subject);
  }

  diffOf(subject: string, attempt?: number): { attempt: number; diff: string } | null {
    return this.d.artifacts.diff(subject, attempt);
  }

  /** The latest workspace figures per subject (the Tasks and Runs lists: "+12 −3 in 2 files"). */
  changesOf(subjects: readonly string[]): Record<string, ChangeSummary> {
    return this.d.artifacts.changes(subjects);
  }

  /** Invariant 4: the listener in a savepoint of its own; only a storage failure (the whole commit's) gets through. */
  private usageRecorded(u: UsageRecorded): void {
    const listener = this.d.onUsageRecorded;
    try {
      this.d.store.write(() => listener(u));
    } catch (e) {
      if (e instanceof GafferError && e.code === 'unavailable') throw e;
      this.d.logger.error('logs: the usage listener failed (the report itself is recorded)', { error: e instanceof Error ? e.message : String(e) });
    }
  }

  private enqueue(item: Pick<Queued, 'entry' | 'text' | 'chars'>): Promise<IngestOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ ...item, resolve, reject });
      this.queuedChars += item.chars;
      this.kick();
    });
  }

  private kick(): void {
    if (this.writing || this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      if (!this.closed) this.current = this.writeBatch();
    });
  }

  private async writeBatch(): Promise<void> {
    if (this.writing || this.queue.length === 0) return;
    this.writing = true;
    const batch: Queued[] = [];
    let n = 0;
    const maxBatch = Math.min(this.maxBatchChars, (this.settings().maxTotalMb * MIB) / BATCH_SHARE_OF_TOTAL);
    while (this.queue.length > 0 && (batch.length === 0 || n + this.queue[0]!.chars <= maxBatch)) {
      const next = this.queue.shift()!;
      n += next.chars;
      batch.push(next);
    }
    try {
      const entries: AppendEntry[] = [];
      const texts: LogFrameText[] = [];
      const order = new Uint8Array(batch.length);
      batch.forEach((b, i) => {
        if (b.text) {
          texts.push(b.text);
          order[i] = 1;
        } else entries.push(b.entry!);
      });
      const ingest = { packed: packBatch(entries), texts, order };
      const outcomes = await this.d.engine.call('ingest', { batch: ingest, now: this.d.clock.now(), settings: this.settings() });
      this.stats.batches++;
      if (this.started) this.armSweep(this.sweepEveryMs);
      this.batchesSinceIndex++;
      this.armIndex();
      batch.forEach((b, i) => b.resolve(outcomes[i]!));
    } catch (e) {
      // Nothing of this batch was committed (log-store invariant 1): every frame in it is refused.
      this.d.logger.error('logs: a batch could not be written; its frames were refused', { error: e instanceof Error ? e.message : String(e) });
      for (const b of batch) b.reject(e instanceof GafferError ? e : new GafferError('unavailable', 'log storage refused the write'));
    } finally {
      this.queuedChars = Math.max(0, this.queuedChars - n);
      this.writing = false;
      this.current = undefined;
      this.kick();
    }
  }

  // ---- reads -------------------------------------------------------------------------------

  read(q: ReadQuery): Promise<LogPage> {
    return this.d.engine.call('read', q);
  }

  attempts(subject: string): Promise<LogAttempt[]> {
    return this.d.engine.call('attempts', { subject });
  }

  search(q: string, limit: number): Promise<SearchHit[]> {
    return this.d.engine.call('search', { q, limit });
  }

  async storage(): Promise<LogStorageStats> {
    return { ...(await this.d.engine.call('stats', {})), refusing: this.admission.refusing() };
  }

  /** A whole attempt as text chunks (`<at> <stream> <text>` per line), for a download. */
  async *text(subject: string, attempt: number): AsyncGenerator<string> {
    let after = 0;
    for (;;) {
      const page: EngineOps['read']['result'] = await this.read({ subject, attempt, after, limit: 5000 });
      if (page.items.length > 0) {
        yield page.items
          .map((l) => `${l.at} ${l.stream.padEnd(6)} ${l.text}${l.cutFrom !== undefined ? ` […cut: ${l.cutFrom} bytes in all]` : ''}\n`)
          .join('');
      }
      if (page.next === null) return;
      after = page.next;
    }
  }

  usageOf(subject: string): UsageTotals {
    return this.d.ledger.ofSubject(subject);
  }

  usagePerAttempt(subject: string): Array<UsageTotals & { attempt: number }> {
    return this.d.ledger.perAttempt(subject);
  }

  usageSummary(by: UsageGroup, from: number, to: number, filter: { role?: string; job?: string } = {}): UsageRow[] {
    return this.d.ledger.summary(by, from, to, filter);
  }

  dailyUsage(from: number, to: number): DailyUsage[] {
    return this.d.ledger.daily(from, to);
  }

  costliestRuns(from: number, to: number, limit: number): CostlyRun[] {
    return this.d.ledger.topRuns(from, to, limit, this.d.describeRun);
  }

  // ---- retention ---------------------------------------------------------------------------

  /** Deletes whole segments past the retention (also runs on a timer once `start` was called). */
  async sweep(): Promise<{ removed: number }> {
    if (this.closed) return { removed: 0 };
    try {
      const r = await this.d.engine.call('sweep', { now: this.d.clock.now(), settings: this.settings() });
      if (r.removed > 0) this.d.logger.info(`logs: retention removed ${r.removed} old segment(s)`);
      return r;
    } catch (e) {
      this.d.logger.error('logs: retention sweep failed; retrying at the next sweep', { error: e instanceof Error ? e.message : String(e) });
      return { removed: 0 };
    }
  }

  /**
   * Arms the retention sweep: at once when logs are stored already, else from the first batch
   * written (so a Gaffer that keeps no logs never starts the worker for nothing).
   */
  start(): void {
    this.started = true;
    if (this.d.hasStoredLogs()) {
      this.armSweep(0);
      this.armIndex();
    }
  }

  /**
   * The word index is filled only once appends pause for a second, a chunk at a time, so it
   * never competes with a flood of lines (search indexes what is missing first, up to a bound).
   */
  private armIndex(delayMs = INDEX_PAUSE_MS): void {
    if (this.indexTimer || this.closed) return;
    this.indexTimer = this.d.clock.setTimeout(() => {
      this.indexTimer = undefined;
      if (this.batchesSinceIndex > 0) {
        this.batchesSinceIndex = 0;
        this.armIndex();
        return;
      }
      this.d.engine.call('index', { budget: INDEX_CHUNK }).then(
        (n) => {
          if (n > 0) this.armIndex(0);
        },
        (e: unknown) => this.d.logger.warn('logs: word index step failed; it is retried after the next lines', { error: e instanceof Error ? e.message : String(e) }),
      );
    }, delayMs);
  }

  private armSweep(delayMs: number): void {
    if (this.sweepTimer || this.closed) return;
    const tick = () => {
      void this.sweep();
      this.sweepTimer = this.d.clock.setTimeout(tick, this.sweepEveryMs);
    };
    this.sweepTimer = this.d.clock.setTimeout(tick, delayMs);
  }

  /**
   * Stops taking frames: queued ones are refused (they were never acknowledged, so the SDK
   * resends them to the next Gaffer), the batch being written finishes, then the worker closes.
   * Resolves once the segment files are closed.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    this.sweepTimer?.cancel();
    this.indexTimer?.cancel();
    for (const b of this.queue.splice(0)) b.reject(new GafferError('unavailable', 'the scheduler is shutting down'));
    this.queuedChars = 0;
    this.closing = (this.current ?? Promise.resolve()).then(() => this.d.engine.close());
    return this.closing;
  }
}
