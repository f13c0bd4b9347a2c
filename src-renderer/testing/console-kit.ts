/**
 * The renderer's test kit: the real console behind the `ConsoleApi` the store is handed, with no
 * server and no sockets. Test code only (lint keeps production renderer code from importing
 * `testing/`; this folder alone may reach into the main process).
 *
 * What is real: an in-memory core (`:memory:` database, a manual clock), the console method table
 * the Electron IPC and the headless HTTP route dispatch to (`createConsoleMethods`: the same method
 * names, argument validation, refusals and error bodies), the event hub both shells push live
 * events through (`ConsoleEventHub`: mapping, 100 ms batches, coalescing), and the audit export.
 * Replies and events cross a JSON round trip, as they do over the wire.
 *
 * What the kit adds is the transport's own behaviour, the part a test must be able to provoke:
 * latency (`hold`), a network failure (`dropNext`), a tab without a token (`requireToken`), and
 * a spy on the calls made. A test seeds state through `kit.core` (or through `kit.call`, the
 * operator's way), never by writing canned answers.
 *
 * Time: the store, the hub and the core share one `ManualClock`; `kit.timers` is what the store
 * takes (`timers`, `now`), and `kit.timers.advance(ms)` moves all three.
 */
import { ManualClock } from '../../src-main/common/clock';
import {
  ConsoleCallError,
  type AuditExportArgs,
  type ConsoleApi,
  type ConsoleArgs,
  type ConsoleEvent,
  type ConsoleMethod,
  type ConsoleResult,
  type ExportProgress,
} from '../../src-main/common/console-api';
import type { SchedulerConfig } from '../../src-main/common/config';
import { GafferError, isGafferError, toErrorBody } from '../../src-main/common/errors';
import { createCore, type Core } from '../../src-main/core/create-core';
import { UsageLedger, type UsageIncrement } from '../../src-main/core/logs/usage-store';
import { ConsoleEventHub } from '../../src-main/server/console/events';
import { rowsInChunk, startConsoleExport } from '../../src-main/server/console/export';
import { createConsoleMethods, type ConsoleMethods } from '../../src-main/server/console/methods';
import { ManualTimers } from './manual-timers';

/** The manual clock's start: a Monday noon (UTC), the day the renderer's tests are set in. */
export const KIT_START = '2026-11-30T12:00:00.000Z';

export interface ConsoleKitOptions {
  /**
   * Page sizes the server answers at most, by method (the contract lets a server answer fewer
   * items than asked, with a cursor): paging is exercised without seeding a thousand rows.
   */
  pageCap?: Partial<Record<ConsoleMethod, number>>;
  /** Where the shared clock starts (default KIT_START). */
  start?: string | number;
  config?: Partial<SchedulerConfig>;
  /** Recorded on every operator action (default `operator:browser`, the headless console). */
  actor?: string;
}

/** A call as the transport sent it. */
export interface KitCall {
  method: ConsoleMethod;
  args: unknown;
}

/** Matches a call by method and, optionally, by some of its arguments (e.g. `{ id: 'job_a' }`). */
type CallMatch = { method: ConsoleMethod | 'exportAudit'; args?: Record<string, unknown> };

const roundTrip = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

export class ConsoleKit implements ConsoleApi {
  readonly shell = 'browser' as const;
  readonly clock: ManualClock;
  /** The store's timers and clock: the core's clock, so one `advance` moves everything. */
  readonly timers: ManualTimers;
  readonly core: Core;
  readonly methods: ConsoleMethods;
  readonly hub: ConsoleEventHub;
  /** Every call, in order. */
  readonly calls: KitCall[] = [];
  private readonly listeners = new Set<(e: ConsoleEvent) => void>();
  private hubSubscription: { dispose(): void } | undefined;
  private readonly holds: Array<CallMatch & { waiting: Array<() => void> }> = [];
  private readonly drops: Array<CallMatch & { skip: number }> = [];
  private token: { expected: string; current: string | null } | null = null;
  private readonly pageCap: Partial<Record<ConsoleMethod, number>>;

  constructor(opts: ConsoleKitOptions = {}) {
    this.pageCap = opts.pageCap ?? {};
    this.clock = new ManualClock(opts.start ?? KIT_START);
    this.timers = new ManualTimers(this.clock);
    this.core = createCore({ clock: this.clock, dbPath: ':memory:', dataDir: '/nonexistent/gaffer-kit', config: opts.config ?? {}, logs: { inline: true } });
    this.methods = createConsoleMethods(this.core, { actor: opts.actor ?? 'operator:browser', port: 7311, dataDir: null, version: '0.0.0-kit' });
    this.hub = new ConsoleEventHub(this.core.events, { timers: this.timers, logger: this.core.logger });
  }

  // ---- ConsoleApi (what the store sees) --------------------------------------------------------

  async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
    this.calls.push({ method, args });
    await this.transport(method, args);
    // The wire carries JSON: what is not JSON does not reach the table either.
    const sent = roundTrip((args ?? {}) as Record<string, unknown>);
    const cap = this.pageCap[method];
    if (cap !== undefined) sent.limit = Math.min(Number(sent.limit ?? cap), cap);
    const reply = await this.methods.dispatch(method, sent);
    if (!reply.ok) throw new ConsoleCallError(reply.error);
    return roundTrip(reply.value) as ConsoleResult<M>;
  }

  subscribe(listener: (event: ConsoleEvent) => void): () => void {
    this.listeners.add(listener);
    this.hubSubscription ??= this.hub.subscribe((batch) => {
      for (const e of roundTrip(batch)) for (const l of [...this.listeners]) l(e);
    });
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        this.hubSubscription?.dispose();
        this.hubSubscription = undefined;
      }
    };
  }

  /** As the Electron shell does it: the rows the core exports, with progress; the file is not written. */
  async exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<{ file: string; rows: number } | null> {
    await this.transport('exportAudit', args);
    let exp;
    try {
      exp = startConsoleExport(this.core, roundTrip(args));
    } catch (e) {
      throw isGafferError(e) ? new ConsoleCallError(toErrorBody(e)) : e;
    }
    let rows = 0;
    let bytes = 0;
    let first = true;
    for await (const chunk of exp.chunks) {
      rows += rowsInChunk(chunk, exp.format, first);
      bytes += Buffer.byteLength(chunk);
      first = false;
      onProgress({ rows, bytes, done: false });
    }
    onProgress({ rows, bytes, done: true });
    return { file: exp.filename, rows };
  }

  signIn(token: string): void {
    if (this.token) this.token.current = token.trim() || this.token.current;
  }

  // ---- the transport's behaviour, for a test to provoke ----------------------------------------

  /**
   * From now on the server wants `token` and the tab has none: every call is refused as the
   * headless server refuses it (`unauthorized`) until the store signs in with that token.
   */
  requireToken(token: string): void {
    this.token = { expected: token, current: null };
  }

  /** Holds the calls that match until `release()` (a slow answer, to test what is in flight). */
  hold(method: CallMatch['method'], args?: Record<string, unknown>): () => void {
    const h = { method, args, waiting: [] as Array<() => void> };
    this.holds.push(h);
    return () => {
      this.holds.splice(this.holds.indexOf(h), 1);
      h.waiting.splice(0).forEach((w) => w());
    };
  }

  /** The next matching call (after `skip` matching ones go through) never reaches Gaffer: `unavailable`. */
  dropNext(method: CallMatch['method'], opts: { args?: Record<string, unknown>; skip?: number } = {}): void {
    this.drops.push({ method, args: opts.args, skip: opts.skip ?? 0 });
  }

  countCalls(method: ConsoleMethod): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  /** The arguments of every call of `method`, in order. */
  argsOf(method: ConsoleMethod): unknown[] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  /**
   * Pushes `events` through the hub now, as one batch (for what a test cannot provoke cheaply
   * through the core: a burst of thousands, a log tail). Core changes arrive on their own, through
   * the hub's batches, once the clock has moved.
   */
  emit(...events: ConsoleEvent[]): void {
    this.hub.publish(events);
    this.hub.flush();
  }

  /** Appends `n` audit rows in one transaction (ids follow the log), cycling through a few types. */
  seedAudit(n: number, row: (i: number) => { type: string; actor: string; subject: string; detail?: unknown } = defaultAuditRow): void {
    this.core.store.write(() => {
      for (let i = 0; i < n; i++) this.core.audit.append(row(i));
    });
  }

  /**
   * Writes usage rows into the ledger, as agents' `usage` frames leave them (for spend that a test
   * needs in the past, or more of it than an agent could cheaply report): at the clock's now
   * unless `at` is given.
   */
  seedUsage(...rows: Array<Partial<UsageIncrement> & Pick<UsageIncrement, 'subject' | 'role'>>): void {
    const ledger = new UsageLedger(this.core.db);
    this.core.store.write(() => {
      for (const r of rows) ledger.add({ attempt: 1, jobId: null, instanceId: 'kit-agent', at: this.clock.now(), ...r });
    });
  }

  private jobsRunning = false;

  /** Starts the jobs runner (it takes agents' run reports; its timers run on the manual clock). */
  runJobs(): void {
    if (this.jobsRunning) return;
    this.jobsRunning = true;
    this.core.jobs.start();
  }

  dispose(): void {
    if (this.jobsRunning) this.core.jobs.stop();
    this.hub.dispose();
    this.core.close();
  }

  private matches(m: CallMatch, method: string, args: unknown): boolean {
    if (m.method !== method) return false;
    const a = (args ?? {}) as Record<string, unknown>;
    return Object.entries(m.args ?? {}).every(([k, v]) => a[k] === v);
  }

  /** What the wire does before the call reaches the method table. */
  private async transport(method: string, args: unknown): Promise<void> {
    const held = this.holds.find((h) => this.matches(h, method, args));
    if (held) await new Promise<void>((r) => held.waiting.push(r));
    await Promise.resolve();
    const drop = this.drops.find((d) => this.matches(d, method, args));
    if (drop && drop.skip-- <= 0) {
      this.drops.splice(this.drops.indexOf(drop), 1);
      throw new ConsoleCallError({ code: 'unavailable', status: 503, message: 'Cannot reach Gaffer: the network is down (test)' });
    }
    if (this.token && this.token.current !== this.token.expected) {
      throw new ConsoleCallError(toErrorBody(new GafferError('unauthorized', 'a valid operator token is required (open the console URL printed by gaffer)')));
    }
  }
}

const AUDIT_TYPES = ['lock.claim', 'lock.release', 'task.create'] as const;

/** Row i: a type in turn, two actors, 50 subjects (`task:1`…`task:50`). */
function defaultAuditRow(i: number) {
  return { type: AUDIT_TYPES[i % 3]!, actor: i % 2 ? 'inst-a' : 'operator:browser', subject: `task:${(i % 50) + 1}`, detail: { i } };
}

/**
 * An agent connected to the kit's hub in-process (no socket): it says hello with a token of its
 * role, answers job triggers with `onTrigger` (default: it fails the run, `retryable`), and can be
 * asked for a request of its own. Frames cross as JSON text, as on the wire.
 */
export class KitAgent {
  instanceId = '';
  /** Pushes the hub sent (job triggers, prechecks, …). */
  readonly pushes: Array<{ type: string; [k: string]: unknown }> = [];
  private seq = 0;
  private readonly waiting = new Map<number, (r: { ok: boolean; result?: unknown; error?: unknown }) => void>();
  private readonly conn;

  private constructor(
    kit: ConsoleKit,
    secret: string,
    public onTrigger: (t: { runId: string }, agent: KitAgent) => Promise<void> | void,
  ) {
    const token = kit.core.tokens.verify(secret);
    this.conn = kit.core.hub.connect(
      {
        send: (text) => this.received(text),
        close: () => {},
        bufferedAmount: 0,
      },
      { remoteAddress: '127.0.0.1', token },
    );
  }

  /** Connects an agent of `role` and waits for its hello to be answered. */
  static async join(kit: ConsoleKit, role: string, onTrigger: KitAgent['onTrigger'] = (t, a) => a.fail(t.runId)): Promise<KitAgent> {
    kit.runJobs();
    const { token } = kit.core.tokens.create({ name: `${role}-agent`, role, actor: 'operator:browser' });
    const agent = new KitAgent(kit, token, onTrigger);
    const hello = await agent.request('hello', { role, name: `${role}-agent` });
    if (!hello.ok) throw new Error(`hello refused: ${JSON.stringify(hello.error)}`);
    agent.instanceId = (hello.result as { instanceId: string }).instanceId;
    return agent;
  }

  request(type: string, fields: Record<string, unknown> = {}): Promise<{ ok: boolean; result?: unknown; error?: unknown }> {
    const id = ++this.seq;
    const reply = new Promise<{ ok: boolean; result?: unknown; error?: unknown }>((r) => this.waiting.set(id, r));
    this.conn.receive(JSON.stringify({ id, type, ...fields }));
    return reply;
  }

  /** Starts the run and reports it failed. */
  async fail(runId: string, errorClass: 'retryable' | 'fatal' | 'needs_human' = 'retryable', error = 'downstream timeout'): Promise<void> {
    await this.request('run_started', { runId });
    await this.request('run_result', { runId, outcome: 'failed', errorClass, error });
  }

  private received(text: string): void {
    const msg = JSON.parse(text) as { id?: number; ok?: boolean; type?: string; runId?: string };
    if (msg.type !== undefined && msg.ok === undefined) {
      this.pushes.push(msg as { type: string });
      if (msg.type === 'job_trigger') void this.onTrigger(msg as { runId: string }, this);
      return;
    }
    const w = this.waiting.get(msg.id as number);
    this.waiting.delete(msg.id as number);
    w?.(msg as { ok: boolean });
  }
}

/** A task of `role` created with `fields`, claimed by a new agent and reported blocked with a question (a `needs_human` item). */
export async function seedBlockedTask(kit: ConsoleKit, fields: { title: string; role: string; budget?: { maxCostUsdPerRun?: number; maxTokensPerRun?: number } }): Promise<number> {
  const { task } = await kit.call('tasks.create', fields);
  const agent = await KitAgent.join(kit, fields.role);
  const claim = await agent.request('claim', { role: fields.role });
  const held = (claim.result as { task: { id: number }; lock: { fence: number } } | undefined) ?? null;
  if (!held || held.task.id !== task.id) throw new Error(`seedBlockedTask: the agent claimed ${JSON.stringify(claim)}, not task ${task.id} (is another task of ${fields.role} ready?)`);
  await agent.request('report', { instanceId: agent.instanceId, taskId: task.id, fence: held.lock.fence, status: 'blocked', note: 'which branch?' });
  return task.id;
}
