/**
 * An in-memory ConsoleApi for unit tests and UI previews: same interface, same error codes,
 * no server. Behaviour is deliberately simple but faithful where the UI depends on it: audit
 * paging by cursor (desc/asc, `before`/`after`, `partial`), task statuses and operator edges,
 * tokens shown once, kill switch, live events through `emit`; runs retried by hand, webhook
 * secrets shown whole once (on the save that added the webhook, and on a rotation) then masked.
 */
import {
  ConsoleCallError,
  type AuditExportArgs,
  type ConsoleApi,
  type ConsoleArgs,
  type ConsoleEvent,
  type ConsoleMethod,
  type ConsoleResult,
  type ConsoleSettings,
  type ExpiredLockCard,
  type ExportProgress,
  type InstanceView,
  type RoleSummary,
  type TokenView,
} from '../../src-main/common/console-api';
import { DEFAULT_CONFIG, recoveryBoundS } from '../../src-main/common/config';
import { ERROR_STATUS, type ErrorCode } from '../../src-main/common/errors';
import { BULK_APPLIES_TO, type AuditEvent, type BulkTaskAction, type BulkTaskResult, type Signal, type StorageStatus, type Task, type TaskStatus } from '../../src-main/common/model';
import { DEFAULT_WEBHOOK_EVENTS, type Delivery, type InboxCounts, type InboxItem, type NotificationSettingsView, type NotificationsInput } from '../../src-main/common/attention';
import type { Backfill, Run } from '../../src-main/common/job-schema';
import { BULK_CHUNK, type TaskFilter } from '../../src-main/common/schemas';

export interface FakeOptions {
  now?: () => number;
  /** Audit rows generated up front (ids 1..n, oldest first). */
  auditRows?: number;
  /** Matches examined per audit page before answering partial (the server's scan budget). */
  scanBudget?: number;
}

export class FakeConsoleApi implements ConsoleApi {
  readonly shell = 'browser' as const;
  tasks = new Map<number, Task>();
  instances: InstanceView[] = [];
  tokens: TokenView[] = [];
  expired: ExpiredLockCard[] = [];
  audit: AuditEvent[] = [];
  inbox: InboxItem[] = [];
  /** Runs by id, for `runs.retry` (a test puts the failed runs it retries). */
  runs = new Map<string, Run>();
  /** Webhooks as stored: the whole secret, shown masked by `notifications.get`. */
  webhooks: Array<NotificationSettingsView['webhooks'][number]> = [];
  consoleUrl: string | null = null;
  deliveries: Delivery[] = [];
  /** What `dashboard.get` says about refused writes (a test sets it to show the banner). */
  storage: StorageStatus | null = null;
  signals = new Map<string, Signal>();
  /** Calls of `tasks.bulk` answered so far. */
  bulkCalls = 0;
  settings: ConsoleSettings = { config: { ...DEFAULT_CONFIG }, killSwitch: false, port: 7311, dataDir: '/tmp/gaffer', version: '0.1.0-test' };
  /** Every call, in order (method and args). */
  calls: Array<{ method: ConsoleMethod; args: unknown }> = [];
  private listeners = new Set<(e: ConsoleEvent) => void>();
  private failures = new Map<string, { code: ErrorCode; message: string; times: number }>();
  private gates = new Map<string, Array<() => void>>();
  private seq = 0;
  private tokenSeq = 0;
  private readonly now: () => number;
  private readonly scanBudget: number;

  constructor(opts: FakeOptions = {}) {
    this.now = opts.now ?? (() => Date.now());
    this.scanBudget = opts.scanBudget ?? 1_000_000;
    const n = opts.auditRows ?? 0;
    for (let i = 0; i < n; i++) this.appendAudit(i % 3 === 0 ? 'lock.claim' : i % 3 === 1 ? 'lock.release' : 'task.create', i % 2 ? 'inst-a' : 'operator:browser', `task:${(i % 50) + 1}`, { i }, false);
  }

  /** The token the store signed in with (browser transport's `signIn`). */
  signedInWith: string | null = null;

  signIn(token: string): void {
    this.signedInWith = token;
  }

  // ---- test controls -------------------------------------------------------------------------

  /** The next `times` calls of `method` fail with `code`. */
  failNext(method: ConsoleMethod | 'exportAudit', code: ErrorCode, message = `${code} (fake)`, times = 1): void {
    this.failures.set(method, { code, message, times });
  }

  /** Holds calls of `method` until `release()` is called (to test in-flight behaviour). */
  hold(method: ConsoleMethod): () => void {
    const waiting: Array<() => void> = [];
    this.gates.set(method, waiting);
    return () => {
      this.gates.delete(method);
      waiting.splice(0).forEach((w) => w());
    };
  }

  emit(e: ConsoleEvent): void {
    for (const l of [...this.listeners]) l(e);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  countCalls(method: ConsoleMethod): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  addTask(p: Partial<Task> & { title: string; role: string }): Task {
    const id = ++this.seq;
    const at = new Date(this.now()).toISOString();
    const t: Task = {
      id,
      status: 'backlog',
      priority: 0,
      payload: null,
      dependsOn: [],
      attempt: 0,
      previouslyExpired: false,
      fence: 0,
      unmetDependencies: 0,
      note: null,
      output: null,
      createdAt: at,
      updatedAt: at,
      lock: null,
      traceId: null,
      ...p,
    } as Task;
    t.id = p.id ?? id;
    this.seq = Math.max(this.seq, t.id);
    this.tasks.set(t.id, t);
    return t;
  }

  appendAudit(type: string, actor: string, subject: string, detail: unknown, emit = true): AuditEvent {
    const id = this.audit.length + 1;
    const prev = this.audit[id - 2]?.hash ?? '0'.repeat(64);
    const e: AuditEvent = { id, at: new Date(this.now()).toISOString(), type, actor, subject, detail, traceId: null, prevHash: prev, hash: id.toString(16).padStart(64, '0') };
    this.audit.push(e);
    if (emit) this.emit({ type: 'audit.appended', event: e });
    return e;
  }

  // ---- ConsoleApi ------------------------------------------------------------------------------

  subscribe(listener: (event: ConsoleEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async exportAudit(args: AuditExportArgs, onProgress: (p: ExportProgress) => void): Promise<{ file: string; rows: number } | null> {
    this.maybeFail('exportAudit');
    const rows = this.matchAudit(args).sort((a, b) => a.id - b.id);
    let bytes = 0;
    for (let i = 0; i < rows.length; i += 100) {
      bytes += rows.slice(i, i + 100).reduce((n, r) => n + JSON.stringify(r).length + 1, 0);
      onProgress({ rows: Math.min(rows.length, i + 100), bytes, done: false });
      await Promise.resolve();
    }
    onProgress({ rows: rows.length, bytes, done: true });
    return { file: `gaffer-audit.${args.format}`, rows: rows.length };
  }

  async call<M extends ConsoleMethod>(method: M, args: ConsoleArgs<M>): Promise<ConsoleResult<M>> {
    this.calls.push({ method, args });
    const gate = this.gates.get(method);
    if (gate) await new Promise<void>((r) => gate.push(r));
    await Promise.resolve();
    this.maybeFail(method);
    return this.handle(method, args as Record<string, unknown>) as ConsoleResult<M>;
  }

  private maybeFail(method: string): void {
    const f = this.failures.get(method);
    if (!f) return;
    if (--f.times <= 0) this.failures.delete(method);
    throw new ConsoleCallError({ code: f.code, status: ERROR_STATUS[f.code], message: f.message });
  }

  private err(code: ErrorCode, message: string): never {
    throw new ConsoleCallError({ code, status: ERROR_STATUS[code], message });
  }

  private task(id: unknown): Task {
    const t = this.tasks.get(Number(id));
    if (!t) this.err('not_found', `unknown task ${String(id)}`);
    return t;
  }

  private edge(id: unknown, from: TaskStatus[], to: TaskStatus, patch: Partial<Task> = {}): Task {
    const t = this.task(id);
    if (!from.includes(t.status)) this.err('invalid_transition', `task ${t.id} is ${t.status}`);
    const n: Task = { ...t, ...patch, status: to, updatedAt: new Date(this.now()).toISOString() };
    this.tasks.set(n.id, n);
    this.emit({ type: 'task.changed', taskId: n.id, role: n.role, status: n.status });
    return n;
  }

  roleSummaries(): RoleSummary[] {
    const by = new Map<string, RoleSummary>();
    const now = this.now();
    for (const t of this.tasks.values()) {
      let r = by.get(t.role);
      if (!r) by.set(t.role, (r = { role: t.role, ready: 0, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: 0, oldestReadyAgeMs: null }));
      if (t.status === 'backlog') {
        if (t.unmetDependencies > 0) r.waiting++;
        else {
          r.ready++;
          const age = now - Date.parse(t.createdAt);
          r.oldestReadyAgeMs = Math.max(r.oldestReadyAgeMs ?? 0, age);
        }
      } else if (t.status === 'in_progress') r.inProgress++;
      else if (t.status === 'blocked') r.blocked++;
      else if (t.status === 'failed') r.failed++;
      else if (t.status === 'done') r.done++;
    }
    for (const i of this.instances) if (i.status === 'online' && by.get(i.role)) by.get(i.role)!.onlineInstances++;
    return [...by.values()];
  }

  private matchTasks(f: TaskFilter): Task[] {
    const q = f.q?.toLowerCase();
    return [...this.tasks.values()].filter(
      (t) => (!f.role || t.role === f.role) && (!f.status || t.status === f.status) && (!q || `#${t.id} ${t.title} ${JSON.stringify(t.payload)}`.toLowerCase().includes(q)),
    );
  }

  /** One chunk of a bulk action, as the server does it: at most BULK_CHUNK tasks, skips with why. */
  private bulk(a: Record<string, unknown>): BulkTaskResult {
    const action = a.action as BulkTaskAction;
    const applies = BULK_APPLIES_TO[action];
    let ids: number[];
    let next: number | null = null;
    const through = a.filter ? ((a.through as number | undefined) ?? this.seq) : null;
    if (a.ids) ids = a.ids as number[];
    else {
      const all = this.matchTasks(a.filter as TaskFilter)
        .filter((t) => t.id > ((a.after as number | undefined) ?? 0) && t.id <= through! && applies.includes(t.status))
        .sort((x, y) => x.id - y.id);
      ids = all.slice(0, BULK_CHUNK).map((t) => t.id);
      next = all.length > BULK_CHUNK ? ids[ids.length - 1]! : null;
    }
    const changed: number[] = [];
    const skipped: BulkTaskResult['skipped'] = [];
    for (const id of ids) {
      const t = this.tasks.get(id);
      if (!t) skipped.push({ taskId: id, code: 'not_found', message: `unknown task ${id}` });
      else if (!applies.includes(t.status)) skipped.push({ taskId: id, code: 'invalid_transition', message: `task ${id} is ${t.status}: ${action} applies to ${applies.join(', ')} tasks` });
      else {
        if (action === 'reprioritise') this.tasks.set(id, { ...t, priority: a.priority as number });
        else this.edge(id, applies as TaskStatus[], action === 'cancel' ? 'cancelled' : 'backlog');
        changed.push(id);
      }
    }
    this.bulkCalls++;
    return { bulkId: (a.bulkId as string | undefined) ?? `bulk_fake${this.bulkCalls}`, changed, skipped, next, through };
  }

  private matchAudit(a: Record<string, unknown>): AuditEvent[] {
    const types = [...((a.types as string[] | undefined) ?? []), ...(a.type ? [a.type as string] : [])];
    const from = a.from !== undefined ? Date.parse(String(a.from)) : -Infinity;
    const to = a.to !== undefined ? Date.parse(String(a.to)) : Infinity;
    const text = typeof a.text === 'string' ? a.text.toLowerCase() : null;
    return this.audit.filter(
      (e) =>
        (types.length === 0 || types.includes(e.type)) &&
        (!a.actor || e.actor === a.actor) &&
        (!a.subject || e.subject === a.subject) &&
        Date.parse(e.at) >= from &&
        Date.parse(e.at) < to &&
        (!text || JSON.stringify(e.detail).toLowerCase().includes(text)),
    );
  }

  private inboxCounts(): InboxCounts {
    const open = this.inbox.filter((i) => i.state === 'open');
    const byKind: InboxCounts['byKind'] = {};
    for (const i of open) byKind[i.kind] = (byKind[i.kind] ?? 0) + 1;
    return { open: open.length, snoozed: this.inbox.filter((i) => i.state === 'snoozed').length, critical: open.filter((i) => i.severity === 'critical').length, byKind };
  }

  private inboxItem(id: unknown): InboxItem {
    const i = this.inbox.find((x) => x.id === id);
    if (!i) this.err('not_found', `unknown inbox item ${String(id)}`);
    return i;
  }

  private inboxEdge(id: unknown, state: 'acked' | 'snoozed', note: unknown, until?: string): InboxItem {
    const i = this.inboxItem(id);
    if (i.state === 'acked') this.err('invalid_transition', `inbox item ${i.id} was already acknowledged`);
    const at = new Date(this.now()).toISOString();
    const n: InboxItem = { ...i, state, note: typeof note === 'string' ? note : i.note, ...(state === 'acked' ? { ackedAt: at, ackedBy: 'operator:browser' } : { snoozedUntil: until ?? null }), updatedAt: at };
    this.inbox = this.inbox.map((x) => (x.id === i.id ? n : x));
    this.emit({ type: 'inbox.changed', itemId: n.id, action: state, kind: n.kind, severity: n.severity, state: n.state, title: n.title, detail: n.detail });
    return n;
  }

  private masked = (secret: string) => `whsec_…${secret.slice(-4)}`;

  private newSecret(): string {
    return `whsec_${String(++this.tokenSeq).padStart(32, 'x')}`;
  }

  private notificationsView(whole: ReadonlySet<string> = new Set()): NotificationSettingsView {
    return {
      webhooks: this.webhooks.map((w) => ({ ...w, secret: whole.has(w.id) ? w.secret : this.masked(w.secret) })),
      desktop: { kinds: ['needs_human'], quietHours: null },
      consoleUrl: this.consoleUrl ?? `http://127.0.0.1:${this.settings.port}/`,
      consoleUrlSet: this.consoleUrl !== null,
    };
  }

  private putNotifications(a: NotificationsInput): NotificationSettingsView {
    const added = new Set<string>();
    this.webhooks = a.webhooks.map((h) => {
      const kept = h.id ? this.webhooks.find((w) => w.id === h.id) : undefined;
      if (h.id && !kept) this.err('not_found', `unknown webhook ${h.id}`);
      const id = kept?.id ?? `wh_${++this.tokenSeq}`;
      if (!kept) added.add(id);
      return {
        id,
        name: h.name ?? kept?.name ?? null,
        url: h.url ? `${h.url.slice(0, 20)}…` : (kept?.url ?? ''),
        events: h.events ?? kept?.events ?? DEFAULT_WEBHOOK_EVENTS,
        format: h.format ?? kept?.format ?? 'json',
        enabled: h.enabled ?? kept?.enabled ?? true,
        secret: kept?.secret ?? this.newSecret(),
        lastDelivery: kept?.lastDelivery ?? null,
      };
    });
    if (a.consoleUrl !== undefined) this.consoleUrl = a.consoleUrl;
    return this.notificationsView(added);
  }

  /** "Retry now" as the server does it: only a failed run that was not backfilled and is not held. */
  private retryRun(id: unknown): { run: Run; backfill: Backfill } {
    const run = this.runs.get(String(id));
    if (!run) this.err('not_found', `unknown run ${String(id)}`);
    if (run.status !== 'failed' || run.disposition === 'backfilled' || run.disposition === 'held') this.err('invalid_transition', `run ${run.id} is ${run.status} (${run.disposition})`);
    const at = new Date(this.now()).toISOString();
    const backfill: Backfill = {
      id: ++this.seq,
      jobId: run.jobId,
      job: run.job,
      slot: run.slot,
      slotAt: run.slotAt,
      runId: run.id,
      reason: 'operator',
      status: 'dispatched',
      attempts: 1,
      instanceId: null,
      lastError: null,
      errorClass: null,
      version: run.version,
      note: 'retried by hand',
      actor: 'operator:browser',
      createdAt: at,
      updatedAt: at,
      dispatchedAt: at,
      finishedAt: null,
      approval: null,
    };
    return { run, backfill };
  }

  private handle(method: ConsoleMethod, a: Record<string, unknown>): unknown {
    switch (method) {
      case 'dashboard.get': {
        const roles = this.roleSummaries();
        return {
          serverTime: new Date(this.now()).toISOString(),
          onlineInstances: this.instances.filter((i) => i.status === 'online').length,
          completedThisWeek: [...this.tasks.values()].filter((t) => t.status === 'done').length,
          expiredLocksToday: this.expired.length,
          runsNeedingAttention: 0,
          recoveryBoundS: recoveryBoundS(this.settings.config),
          killSwitch: this.settings.killSwitch,
          killSwitchBy: this.settings.killSwitch ? { by: 'operator:browser', at: new Date(this.now()).toISOString(), reason: 'fake' } : null,
          roles,
          throughput: [],
          nextTriggers: [],
          inbox: this.inboxCounts(),
          budgets: { settings: { globalDailyUsd: null, perRoleDailyUsd: {}, timezone: null }, zone: 'UTC', day: new Date(this.now()).toISOString().slice(0, 10), resetsAt: new Date(this.now() + 86_400_000).toISOString(), measured: false, caps: [] },
          storage: this.storage,
        };
      }
      case 'inbox.list': {
        const state = (a.state as string | undefined) ?? 'open';
        const limit = (a.limit as number | undefined) ?? 100;
        const all = this.inbox.filter((i) => (state === 'all' || i.state === state) && (!a.kind || i.kind === a.kind)).sort((x, y) => (x.lastAt < y.lastAt ? 1 : x.lastAt > y.lastAt ? -1 : y.id - x.id));
        return { items: all.slice(0, limit), next: all.length > limit ? 'more' : null };
      }
      case 'inbox.counts':
        return this.inboxCounts();
      case 'inbox.get':
        return this.inboxItem(a.id);
      case 'runs.retry':
        return this.retryRun(a.id);
      case 'notifications.get':
        return this.notificationsView();
      case 'notifications.put':
        return this.putNotifications(a as unknown as NotificationsInput);
      case 'notifications.rotateSecret': {
        const w = this.webhooks.find((x) => x.id === a.webhookId);
        if (!w) this.err('not_found', `unknown webhook ${String(a.webhookId)}`);
        w.secret = this.newSecret();
        return { webhookId: w.id, secret: w.secret };
      }
      case 'notifications.deliveries': {
        const items = this.deliveries.filter((d) => !a.status || d.status === a.status);
        return { items: items.slice(0, (a.limit as number | undefined) ?? 100), next: null };
      }
      case 'inbox.ack':
        return this.inboxEdge(a.id, 'acked', a.note);
      case 'inbox.ackMany': {
        const ids = a.ids as number[];
        for (const id of ids) this.inboxItem(id);
        const skipped = ids.filter((id) => this.inboxItem(id).state === 'acked');
        return { acked: ids.filter((id) => !skipped.includes(id)).map((id) => this.inboxEdge(id, 'acked', a.note)), skipped };
      }
      case 'inbox.snooze':
        return this.inboxEdge(a.id, 'snoozed', a.note, String(a.until));
      case 'tasks.list': {
        const limit = (a.limit as number | undefined) ?? 100;
        const desc = a.order === 'desc';
        const after = (a.after as number | undefined) ?? 0;
        const before = (a.before as number | undefined) ?? Infinity;
        const all = this.matchTasks(a as TaskFilter)
          .filter((t) => (desc ? t.id < before : t.id > after))
          .sort((x, y) => (desc ? y.id - x.id : x.id - y.id));
        const items = all.slice(0, limit);
        return { items, next: all.length > limit ? String(items[items.length - 1]!.id) : null, partial: false };
      }
      case 'tasks.count': {
        const action = a.action as BulkTaskAction | undefined;
        const all = this.matchTasks(a.filter as TaskFilter).filter((t) => !action || BULK_APPLIES_TO[action].includes(t.status));
        return { count: all.length, exact: true, through: this.seq };
      }
      case 'tasks.bulk':
        return this.bulk(a);
      case 'tasks.editPayload': {
        const t = this.task(a.taskId);
        if (t.status === 'in_progress' || t.status === 'done' || t.status === 'cancelled') this.err('conflict', `task ${t.id} is ${t.status}`);
        const n = { ...t, payload: a.payload };
        this.tasks.set(n.id, n);
        return n;
      }
      case 'signals.list': {
        const items = [...this.signals.values()].filter((x) => (!a.name || x.name === a.name) && (!a.key || x.key === a.key)).sort((x, y) => (x.name + x.key < y.name + y.key ? -1 : 1));
        const limit = (a.limit as number | undefined) ?? 100;
        return { items: items.slice(0, limit), next: items.length > limit ? 'more' : null };
      }
      case 'signals.set': {
        const k = `${String(a.name)}/${String(a.key)}`;
        const created = !this.signals.has(k);
        const sig: Signal = { name: String(a.name), key: String(a.key), setAt: new Date(this.now()).toISOString(), actor: 'operator:browser', ...(a.value === undefined ? {} : { value: a.value }) };
        this.signals.set(k, sig);
        this.appendAudit('signal.set', 'operator:browser', `signal:${k}`, { reason: a.reason });
        return { signal: sig, created };
      }
      case 'signals.clear': {
        const k = `${String(a.name)}/${String(a.key)}`;
        const sig = this.signals.get(k);
        if (!sig) this.err('not_found', `signal ${String(a.name)} is not set for ${String(a.key)}`);
        this.signals.delete(k);
        this.appendAudit('signal.clear', 'operator:browser', `signal:${k}`, { reason: a.reason });
        return sig;
      }
      case 'tasks.get':
        return this.task(a.taskId);
      case 'tasks.create': {
        const t = this.addTask({ title: String(a.title), role: String(a.role), priority: (a.priority as number) ?? 0, dependsOn: (a.dependsOn as number[]) ?? [], payload: a.payload ?? null });
        this.emit({ type: 'task.changed', taskId: t.id, role: t.role, status: t.status });
        return { task: t, replayed: false };
      }
      case 'tasks.reprioritise': {
        const t = this.task(a.taskId);
        const n = { ...t, priority: a.priority as number };
        this.tasks.set(n.id, n);
        return n;
      }
      case 'tasks.cancel':
        return this.edge(a.taskId, ['backlog', 'in_progress', 'blocked', 'failed'], 'cancelled', { lock: null });
      case 'tasks.retry':
        return this.edge(a.taskId, ['failed'], 'backlog');
      case 'tasks.unblock':
        return this.edge(a.taskId, ['blocked'], 'backlog');
      case 'tasks.forceRelease':
        return this.edge(a.taskId, ['in_progress'], 'backlog', { lock: null, previouslyExpired: true });
      case 'roles.summary':
        return this.roleSummaries();
      case 'locks.expiredToday':
        return this.expired;
      case 'instances.list':
        return this.instances;
      case 'tokens.list':
        return this.tokens;
      case 'tokens.create': {
        const id = `tok_${++this.tokenSeq}`;
        this.tokens.push({ id, name: String(a.name), role: (a.role as string | null) ?? null, createdAt: new Date(this.now()).toISOString(), revokedAt: null });
        return { id, token: `gfa_secret_${this.tokenSeq}` };
      }
      case 'tokens.revoke': {
        const t = this.tokens.find((x) => x.id === a.id);
        if (!t) this.err('not_found', `unknown token ${String(a.id)}`);
        t.revokedAt = new Date(this.now()).toISOString();
        return t;
      }
      case 'audit.query': {
        const order = a.order === 'desc' ? 'desc' : 'asc';
        const limit = (a.limit as number | undefined) ?? 100;
        const lo = (a.after as number | undefined) ?? 0;
        const hi = (a.before as number | undefined) ?? Infinity;
        const matches = this.matchAudit(a).filter((e) => e.id > lo && e.id < hi);
        if (order === 'desc') matches.reverse();
        // Scan budget: count rows examined between the cursor and each match.
        const items: AuditEvent[] = [];
        let examined = 0;
        let lastExamined: number | null = null;
        const range = this.audit.filter((e) => e.id > lo && e.id < hi);
        if (order === 'desc') range.reverse();
        const matchIds = new Set(matches.map((m) => m.id));
        for (const e of range) {
          examined++;
          lastExamined = e.id;
          if (matchIds.has(e.id)) items.push(e);
          if (items.length >= limit || examined >= this.scanBudget) break;
        }
        const exhausted = lastExamined === null || lastExamined === range[range.length - 1]?.id;
        const partial = !exhausted && items.length < limit;
        return { items, next: exhausted ? null : String(lastExamined), partial };
      }
      case 'audit.count':
        return { count: this.matchAudit(a).length, exact: true };
      case 'audit.verify':
        return { ok: true, checked: this.audit.length };
      case 'settings.get':
        return this.settings;
      case 'settings.setKillSwitch':
        this.settings = { ...this.settings, killSwitch: Boolean(a.on) };
        this.emit({ type: 'settings.changed' });
        return this.settings;
    }
  }
}

/** Manual timers for tests: `advance(ms)` runs what falls due, in order. */
export class ManualTimers {
  private t = 0;
  private seq = 0;
  private queue: Array<{ at: number; seq: number; fn: () => void; id: number }> = [];
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number): unknown => {
    const id = ++this.seq;
    this.queue.push({ at: this.t + Math.max(0, ms), seq: id, fn, id });
    return id;
  };
  clearTimeout = (h: unknown): void => {
    this.queue = this.queue.filter((q) => q.id !== h);
  };
  get pending(): number {
    return this.queue.length;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.queue[0];
      if (!next || next.at > end) break;
      this.queue.shift();
      this.t = next.at;
      next.fn();
    }
    this.t = end;
  }
}
