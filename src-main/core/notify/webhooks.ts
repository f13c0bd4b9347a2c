/**
 * Webhook deliveries: every new inbox item of a kind a webhook lists is POSTed to it.
 *
 * Invariants:
 * 1. A durable outbox: the delivery row is inserted in the transaction that raised the item
 *    (inbox.ts invariant 4) and sent only after that commit; a restart resends what is pending.
 *    Delivery is at least once (a crash after the POST and before its row is updated sends again).
 * 2. The body describes the item when it is sent (webhook-format.ts): occurrences folded into it
 *    before the send are in it ("12 slots missed"), and later ones do not send again.
 * 3. Retries back off (BACKOFF_S); after the last one, or at once for an answer that will not
 *    change (a 4xx other than 408/425/429), the delivery is `dead` and stays listed for the
 *    operator to retry by hand. Each attempt is audited (`notify.delivered` / `notify.retry` /
 *    `notify.dead`, subject `webhook:<id>`, the URL masked).
 * 4. Time: due instants come from the injected clock and its timers; a request's timeout is a
 *    clock timer too. At most MAX_PARALLEL requests are in flight; one delivery is never sent twice
 *    at once.
 * 5. Every request is signed with its webhook's secret and names its delivery (`Gaffer-Signature`,
 *    `Gaffer-Delivery`, PROTOCOL §12); a test's delivery id is `test-<unix ms>`.
 * 6. A delivery that gives up, and the next one to the same webhook that gets through, are announced
 *    (`webhook.delivery`) so the inbox raises and resolves `webhook_dead`; an item about a dead
 *    webhook is never queued for that same webhook.
 * 7. Memory: a reply's body is read up to MAX_REPLY_BYTES, never more (PROTOCOL §12); the status
 *    alone decides the outcome.
 */
import { GafferError } from '../../common/errors';
import { deliveriesListInput, type Delivery, type DeliveryStatus, type InboxItem, type InboxKind, type WebhookTestResult } from '../../common/attention';
import type { Logger } from '../../common/logger';
import type { Page } from '../../common/model';
import { actorName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import { z } from 'zod';
import type { CoreContext } from '../context';
import { Where } from '../db/where';
import type { Disposable } from '../events';
import { InstantTimer } from '../time/instant-timer';
import type { NotificationSettings, StoredWebhook } from './settings';
import { itemLink } from './settings';
import { deliveryRows, prepareDeliveryStatements, type DeliveryRow } from './store';
import { maskUrl, signatureHeader, webhookRequest, type Notice } from './webhook-format';

/** Waits before attempt 2, 3, …; the attempt after the last wait is the final one. */
export const BACKOFF_S = [5, 30, 120, 600, 1800, 3600] as const;
export const MAX_ATTEMPTS = BACKOFF_S.length + 1;
const MAX_PARALLEL = 4;
const DEFAULT_TIMEOUT_MS = 10_000;
/** PROTOCOL §12: the most of a receiver's reply body that is read. */
export const MAX_REPLY_BYTES = 64 * 1024;
/** Answers worth retrying among the 4xx. */
const RETRY_4XX = new Set([408, 425, 429]);

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function toDelivery(r: DeliveryRow): Delivery {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    itemId: r.item_id,
    itemTitle: r.item_title ?? null,
    kind: r.kind as InboxKind,
    status: r.status,
    attempts: r.attempts,
    nextAt: iso(r.next_at),
    lastError: r.last_error,
    lastStatus: r.last_status,
    createdAt: iso(r.created_at)!,
    updatedAt: iso(r.updated_at)!,
    deliveredAt: iso(r.delivered_at),
  };
}

/**
 * Reads the reply's body (what it says is not needed) until its end or MAX_REPLY_BYTES, whichever
 * comes first: a receiver that answers 200 MB costs Gaffer one read of 64 KiB, on every retry.
 * True when the whole body was read (the connection can be reused); false when the rest was left
 * unread, and the caller drops the connection.
 */
async function readReply(res: Response): Promise<boolean> {
  if (!res.body) return true;
  const reader = res.body.getReader();
  let n = 0;
  try {
    while (n < MAX_REPLY_BYTES) {
      const { done, value } = await reader.read();
      if (done) return true;
      n += value.byteLength;
    }
    await reader.cancel();
    return false;
  } catch {
    return false; // the receiver broke off its own reply: the status is what counts
  }
}

export interface PostResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** False for an answer that will not change on a retry. */
  retryable: boolean;
}

export interface WebhookOptions {
  /** Per request (default 10 s). */
  timeoutMs?: number;
  /** The User-Agent header. */
  userAgent?: string;
  /** The console's address as the server serves it: the default base of each notification's `url`. */
  consoleUrl?: string;
}

export class Webhooks {
  private readonly inFlight = new Set<number>();
  private readonly timer: InstantTimer;
  private running = false;
  private listeners: Disposable[] = [];
  private readonly pending = new Set<Promise<unknown>>();
  private readonly q;

  constructor(
    private readonly ctx: CoreContext,
    private readonly settings: NotificationSettings,
    private readonly logger: Logger,
    private readonly opts: WebhookOptions = {},
  ) {
    this.timer = new InstantTimer(ctx.clock, () => this.kick());
    this.q = prepareDeliveryStatements(ctx.db);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // A new item's deliveries were queued in its transaction; they leave once the burst that
    // raised it is over, so occurrences folded into it meanwhile are in the body (invariant 2).
    this.listeners.push(
      this.ctx.events.on('inbox.changed', (e) => {
        if (e.action === 'raised') this.kickSoon();
      }),
      this.ctx.events.on('clock.jumped', () => this.kick()),
    );
    this.kick();
  }

  stop(): void {
    this.running = false;
    this.timer.cancel();
    for (const l of this.listeners.splice(0)) l.dispose();
  }

  /** Resolves once no request is in flight (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Queues the item for every enabled webhook that lists its kind (inside the raising transaction). */
  enqueue(item: InboxItem): number {
    const now = this.ctx.clock.now();
    let n = 0;
    for (const w of this.settings.stored().webhooks) {
      if (!w.enabled || !w.events.includes(item.kind)) continue;
      if (item.kind === 'webhook_dead' && item.subject === `webhook:${w.id}`) continue; // invariant 6
      this.q.insert.run(w.id, item.id, item.kind, now, now, now);
      n++;
    }
    return n;
  }

  list(input: unknown = {}): Page<Delivery> {
    const f = parseOrThrow(deliveriesListInput, input, 'delivery filter');
    const limit = f.limit ?? 100;
    const where = new Where().equals('d.status', f.status).equals('d.webhook_id', f.webhookId);
    if (f.after !== undefined) where.and('d.id < ?', f.after);
    // Listed by what they were about (the item's title), not by an id.
    const rows = deliveryRows(this.ctx.db, where, limit + 1);
    const page = rows.slice(0, limit);
    return { items: page.map(toDelivery), next: rows.length > limit ? String(page[page.length - 1]!.id) : null };
  }

  /** A dead delivery goes back in the queue, due now, with a fresh set of retries. */
  retry(id: number, input: unknown): Delivery {
    parseOrThrow(z.number().int().positive(), id, 'delivery id');
    const { actor } = parseOrThrow(z.strictObject({ actor: actorName }), input, 'retry');
    const row = this.ctx.store.write(() => {
      const r = this.q.get.get(id);
      if (!r) throw new GafferError('not_found', `unknown delivery ${id}`);
      if (r.status !== 'dead') throw new GafferError('invalid_transition', `delivery ${id} is ${r.status}; only a dead one is retried by hand`);
      const now = this.ctx.clock.now();
      this.q.update.run({ id, status: 'pending', attempts: 0, next_at: now, last_error: r.last_error, last_status: r.last_status, now, delivered_at: null });
      this.audit('notify.requeue', actor, r.webhook_id, { delivery: id, item: r.item_id, kind: r.kind });
      return this.q.get.get(id)!;
    });
    this.kick();
    return toDelivery(row);
  }

  /** Sends a test notice to one webhook (or each one) now, outside the queue; audited, never retried. */
  async test(input: { webhookId?: string; actor: string }): Promise<WebhookTestResult[]> {
    const all = this.settings.stored().webhooks;
    const hooks = input.webhookId === undefined ? all : all.filter((w) => w.id === input.webhookId);
    if (input.webhookId !== undefined && hooks.length === 0) throw new GafferError('not_found', `unknown webhook ${input.webhookId}`);
    const at = new Date(this.ctx.clock.now()).toISOString();
    const notice: Notice = {
      id: null,
      kind: 'test',
      severity: 'info',
      subject: 'gaffer:test',
      url: itemLink(this.settings.consoleUrl(), null),
      title: 'Test from Gaffer',
      detail: 'If you can read this, Gaffer can reach this webhook.',
      at,
      lastAt: at,
      count: 1,
      state: 'open',
      test: true,
    };
    return Promise.all(
      hooks.map(async (w) => {
        const start = this.ctx.clock.monotonic();
        const r = await this.post(w, notice, `test-${this.ctx.clock.now()}`);
        const ms = Math.round(this.ctx.clock.monotonic() - start);
        this.ctx.store.write(() => this.audit('notify.test', input.actor, w.id, { ok: r.ok, status: r.status, error: r.error, ms }));
        return { webhookId: w.id, url: maskUrl(w.url), ok: r.ok, status: r.status, error: r.error, ms };
      }),
    );
  }

  // ---- the queue ---------------------------------------------------------------------------------

  private kickScheduled = false;

  private kickSoon(): void {
    if (this.kickScheduled || !this.running) return;
    this.kickScheduled = true;
    this.ctx.clock.afterIo(() => {
      this.kickScheduled = false;
      this.kick();
    });
  }

  /** Sends what is due (up to MAX_PARALLEL at once) and arms the timer on the next due instant. */
  kick(): void {
    if (!this.running) return;
    const now = this.ctx.clock.now();
    const free = MAX_PARALLEL - this.inFlight.size;
    if (free > 0) {
      for (const r of this.q.due.all(now, free + this.inFlight.size)) {
        if (this.inFlight.size >= MAX_PARALLEL) break;
        if (!this.inFlight.has(r.id)) this.send(r);
      }
    }
    this.arm();
  }

  private arm(): void {
    if (!this.running) return;
    // The earliest pending delivery not in flight; with every slot busy, the next completion kicks.
    this.timer.set(this.inFlight.size >= MAX_PARALLEL ? null : (this.q.nextDue.all(this.inFlight.size + 1).find((r) => !this.inFlight.has(r.id))?.next_at ?? null));
  }

  private send(r: DeliveryRow): void {
    this.inFlight.add(r.id);
    const p = this.attempt(r)
      .catch((e: unknown) => this.logger.error('webhooks: a delivery could not be recorded; it is retried', { delivery: r.id, error: e instanceof Error ? e.message : String(e) }))
      .finally(() => {
        this.inFlight.delete(r.id);
        this.pending.delete(p);
        this.kick();
      });
    this.pending.add(p);
  }

  private async attempt(r: DeliveryRow): Promise<void> {
    const hook = this.settings.webhook(r.webhook_id);
    const item = r.item_id === null ? undefined : this.q.item.get(r.item_id);
    const attempt = r.attempts + 1;
    if (!hook || !hook.enabled || !item) {
      const why = !hook ? 'the webhook was removed' : !hook.enabled ? 'the webhook was turned off' : 'the item is gone';
      this.finish(r, attempt, 'dead', { ok: false, status: null, error: why, retryable: false }, hook, item?.title ?? null);
      return;
    }
    const result = await this.post(
      hook,
      {
      id: r.item_id,
      url: itemLink(this.settings.consoleUrl(), r.item_id),
      kind: item.kind,
      severity: item.severity,
      subject: item.subject,
      title: item.title,
      detail: item.detail,
      at: new Date(item.first_at).toISOString(),
      lastAt: new Date(item.last_at).toISOString(),
      count: item.count,
      state: item.state,
      },
      String(r.id),
    );
    if (!this.running) return; // stopped meanwhile: the row stays pending and is sent at the next start
    const status: DeliveryStatus = result.ok ? 'delivered' : !result.retryable || attempt >= MAX_ATTEMPTS ? 'dead' : 'pending';
    this.finish(r, attempt, status, result, hook, item.title);
  }

  /** Records an attempt's outcome; `itemTitle` (read when the attempt began) names the item in the announcement. */
  private finish(r: DeliveryRow, attempt: number, status: DeliveryStatus, res: PostResult, hook: StoredWebhook | undefined, itemTitle: string | null): void {
    this.ctx.store.write(() => {
      const now = this.ctx.clock.now();
      const wait = status === 'pending' ? BACKOFF_S[attempt - 1]! * 1000 : 0;
      this.q.update.run({
        id: r.id,
        status,
        attempts: attempt,
        next_at: status === 'pending' ? now + wait : null,
        last_error: res.error,
        last_status: res.status,
        now,
        delivered_at: status === 'delivered' ? now : null,
      });
      const type = status === 'delivered' ? 'notify.delivered' : status === 'pending' ? 'notify.retry' : 'notify.dead';
      this.audit(type, 'webhooks', r.webhook_id, {
        delivery: r.id,
        item: r.item_id,
        kind: r.kind,
        attempt,
        status: res.status,
        ...(res.error ? { error: res.error } : {}),
        ...(hook ? { url: maskUrl(hook.url) } : {}),
        ...(status === 'pending' ? { retryAt: new Date(now + wait).toISOString() } : {}),
      });
      if (status !== 'pending') {
        this.ctx.store.emit({ type: 'webhook.delivery', webhookId: r.webhook_id, deliveryId: r.id, status, attempts: attempt, error: res.error, url: hook ? maskUrl(hook.url) : null, itemTitle, itemKind: r.kind });
      }
    });
  }

  private audit(type: string, actor: string, webhookId: string, detail: Record<string, unknown>): void {
    this.ctx.audit.append({ type, actor, subject: `webhook:${webhookId}`, detail });
  }

  /** One POST; never throws. The URL (a secret) never appears in the error text. */
  private async post(hook: StoredWebhook, notice: Notice, deliveryId: string): Promise<PostResult> {
    let req;
    try {
      req = webhookRequest(hook.url, hook.format, notice);
    } catch (e) {
      return { ok: false, status: null, error: `cannot build the request: ${(e as Error).message}`, retryable: false };
    }
    const abort = new AbortController();
    const timeoutMs = this.opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const timeout = this.ctx.clock.setTimeout(() => abort.abort(), timeoutMs);
    try {
      const res = await fetch(req.url, {
        method: 'POST',
        headers: {
          ...req.headers,
          'content-type': 'application/json',
          'user-agent': this.opts.userAgent ?? 'gaffer-webhooks',
          'gaffer-delivery': deliveryId,
          'gaffer-signature': signatureHeader(hook.secret, req.body, Math.floor(this.ctx.clock.now() / 1000)),
        },
        body: req.body,
        signal: abort.signal,
        redirect: 'manual',
      });
      if (!(await readReply(res))) abort.abort();
      if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status, error: null, retryable: false };
      const retryable = res.status >= 500 || RETRY_4XX.has(res.status);
      return { ok: false, status: res.status, error: `the receiver answered HTTP ${res.status}`, retryable };
    } catch (e) {
      const err = e as Error & { cause?: { code?: string } };
      const why = abort.signal.aborted ? `no answer within ${Math.round(timeoutMs / 1000)} s` : (err.cause?.code ?? err.name ?? 'network error');
      return { ok: false, status: null, error: `could not reach the receiver: ${why}`, retryable: true };
    } finally {
      timeout.cancel();
    }
  }
}
