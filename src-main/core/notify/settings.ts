/**
 * Where inbox items are sent: webhooks and desktop notifications, one `settings` row.
 *
 * Invariants:
 * 1. Webhook URLs are secrets (Slack and ntfy put the token in the URL). They are stored sealed
 *    (core/secrets: AES-256-GCM, purpose `webhook.url`) and leave this module only masked
 *    (`maskUrl`): in the API, the console, the audit and logs. `stored()` opens them for the core.
 *    A PUT that keeps a webhook names its `id` and may leave `url` out to keep the stored one.
 * 2. A PUT replaces the whole configuration, validated before anything is written; it is audited
 *    (`notifications.update`, masked) in the same transaction.
 * 3. Every webhook has a signing secret (PROTOCOL §12), made when it is added (or, for a webhook
 *    stored before secrets existed, at start) and changed only by `rotate`. It is shown whole once:
 *    in the reply that made it; every other view masks it.
 */
import { randomBytes } from 'node:crypto';
import { GafferError } from '../../common/errors';
import { DEFAULT_WEBHOOK_EVENTS, INBOX_KINDS, notificationsInput, type DesktopNotifications, type NotificationSettingsView, type WebhookSecret, type WebhookView } from '../../common/attention';
import { actorName, reason } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import { z } from 'zod';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';
import { isSealed, type SecretBox } from '../secrets';
import { prepareLastDelivery } from './store';
import { maskUrl } from './webhook-format';

/** A webhook as the core uses it: the fields the API shows, with `url` as given (unmasked, opened: invariant 1). */
export type StoredWebhook = Omit<WebhookView, 'lastDelivery'>;

export interface StoredNotifications {
  webhooks: StoredWebhook[];
  desktop: DesktopNotifications;
  consoleUrl?: string | null;
}

const KEY = 'notifications';
export const DEFAULT_NOTIFICATIONS: StoredNotifications = { webhooks: [], desktop: { kinds: [...INBOX_KINDS], quietHours: null }, consoleUrl: null };
/** The console's address when the server names none and the operator set none (PROTOCOL §3's default port). */
export const DEFAULT_CONSOLE_URL = 'http://127.0.0.1:7311/';

const putOpts = notificationsInput.extend({ actor: actorName, reason: reason.optional() });
const rotateOpts = z.strictObject({ actor: actorName, reason: reason.optional() });

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64url')}`;
}

/** `whsec_…` and the last 4 characters: enough to tell two secrets apart, never enough to sign. */
export function maskSecret(secret: string): string {
  return `whsec_…${secret.slice(-4)}`;
}

/** The item's page in the console (the console opens `#/inbox?item=<id>`). */
export function itemLink(consoleUrl: string, itemId: number | null): string {
  const base = consoleUrl.endsWith('/') ? consoleUrl : `${consoleUrl}/`;
  return itemId === null ? `${base}#/inbox` : `${base}#/inbox?item=${itemId}`;
}

export class NotificationSettings {
  private readonly q;
  private readonly row: SettingsRow<StoredNotifications>;

  constructor(
    private readonly ctx: CoreContext,
    private readonly secrets: SecretBox,
    /** The console's own address, from the server that serves it (default DEFAULT_CONSOLE_URL). */
    private readonly serverConsoleUrl: string = DEFAULT_CONSOLE_URL,
  ) {
    this.row = settingsRow(ctx.db, KEY);
    this.q = prepareLastDelivery(ctx.db);
  }

  /** The stored configuration, secrets opened (core use only). */
  stored(): StoredNotifications {
    const s = { ...structuredClone(DEFAULT_NOTIFICATIONS), ...this.row.read() };
    return {
      ...s,
      webhooks: s.webhooks.map((w) => ({
        ...w,
        url: this.secrets.open(w.url, 'webhook.url', `webhook ${w.id}'s URL`),
        // A webhook stored before signing secrets existed has none yet (ensureSecrets makes it).
        ...(typeof w.secret === 'string' && isSealed(w.secret) ? { secret: this.secrets.open(w.secret, 'webhook.secret', `webhook ${w.id}'s signing secret`) } : {}),
      })),
    };
  }

  /** Writes the configuration with its URLs and signing secrets sealed. */
  private write(s: StoredNotifications): void {
    this.row.write({
      ...s,
      webhooks: s.webhooks.map((w) => ({ ...w, url: this.secrets.seal(w.url, 'webhook.url'), ...(w.secret ? { secret: this.secrets.seal(w.secret, 'webhook.secret') } : {}) })),
    });
  }

  /** URLs an earlier version stored in clear, sealed (core/secrets invariant 2); how many. Inside a write. */
  sealClearValues(): number {
    const s = this.row.read();
    const clear = (s?.webhooks ?? []).filter((w) => !isSealed(w.url));
    if (clear.length === 0) return 0;
    this.row.write({ ...s!, webhooks: s!.webhooks!.map((w) => (isSealed(w.url) ? w : { ...w, url: this.secrets.seal(w.url, 'webhook.url') })) } as StoredNotifications);
    return clear.length;
  }

  webhook(id: string): StoredWebhook | undefined {
    return this.stored().webhooks.find((w) => w.id === id);
  }

  /** The base of the `url` link in notifications: the operator's setting, else the server's address. */
  consoleUrl(): string {
    return this.stored().consoleUrl ?? this.serverConsoleUrl;
  }

  /** Gives every webhook stored before secrets existed one (invariant 3); at start. */
  ensureSecrets(): void {
    const s = this.stored();
    if (s.webhooks.every((w) => typeof w.secret === 'string' && w.secret !== '')) return;
    this.ctx.store.write(() => {
      const cur = this.stored();
      const missing = cur.webhooks.filter((w) => typeof w.secret !== 'string' || w.secret === '');
      if (missing.length === 0) return;
      for (const w of missing) w.secret = newWebhookSecret();
      this.write(cur);
      this.ctx.audit.append({ type: 'notifications.secrets', actor: 'webhooks', subject: 'settings:notifications', detail: { made: missing.map((w) => w.id) } });
    });
  }

  /** A new signing secret for one webhook, returned this once (invariant 3). */
  rotate(id: string, input: unknown): WebhookSecret {
    const { actor, reason: why } = parseOrThrow(rotateOpts, input, 'rotation');
    return this.ctx.store.write(() => {
      const cur = this.stored();
      const w = cur.webhooks.find((x) => x.id === id);
      if (!w) throw new GafferError('not_found', `unknown webhook ${id}`);
      w.secret = newWebhookSecret();
      this.write(cur);
      this.ctx.audit.append({ type: 'notifications.rotate', actor, subject: `webhook:${id}`, detail: { ...(why ? { reason: why } : {}), secret: maskSecret(w.secret) } });
      return { webhookId: id, secret: w.secret };
    });
  }

  /** What the API and the console show (invariant 1); `reveal`: webhooks whose secret is shown whole. */
  view(reveal: ReadonlySet<string> = new Set()): NotificationSettingsView {
    const s = this.stored();
    return {
      webhooks: s.webhooks.map((w) => this.webhookView(w, reveal.has(w.id))),
      desktop: s.desktop,
      consoleUrl: s.consoleUrl ?? this.serverConsoleUrl,
      consoleUrlSet: typeof s.consoleUrl === 'string',
    };
  }

  private webhookView(w: StoredWebhook, reveal: boolean): WebhookView {
    const last = this.q.lastDelivery.get(w.id);
    return {
      id: w.id,
      name: w.name,
      url: maskUrl(w.url),
      events: w.events,
      format: w.format,
      enabled: w.enabled,
      secret: reveal ? w.secret : maskSecret(w.secret ?? ''),
      lastDelivery: last ? { status: last.status, at: new Date(last.updated_at).toISOString(), error: last.last_error } : null,
    };
  }

  /** Replaces the configuration (invariant 2). */
  put(input: unknown): NotificationSettingsView {
    const { webhooks, desktop, consoleUrl, actor, reason: why } = parseOrThrow(putOpts, input, 'notifications');
    return this.ctx.store.write(() => {
      const before = this.stored();
      const seen = new Set<string>();
      const made = new Set<string>();
      const next: StoredWebhook[] = webhooks.map((w, i) => {
        const old = w.id === undefined ? undefined : before.webhooks.find((b) => b.id === w.id);
        if (w.id !== undefined && !old) throw new GafferError('bad_request', `invalid notifications at "webhooks.${i}.id": there is no webhook ${w.id}`);
        const id = old?.id ?? `wh_${randomBytes(6).toString('base64url')}`;
        if (seen.has(id)) throw new GafferError('bad_request', `invalid notifications at "webhooks.${i}.id": webhook ${id} is listed twice`);
        seen.add(id);
        if (!old?.secret) made.add(id);
        return {
          id,
          name: w.name ?? old?.name ?? null,
          url: w.url ?? old!.url,
          events: [...new Set(w.events ?? old?.events ?? DEFAULT_WEBHOOK_EVENTS)],
          format: w.format ?? old?.format ?? 'json',
          enabled: w.enabled ?? old?.enabled ?? true,
          secret: old?.secret || newWebhookSecret(),
        };
      });
      const stored: StoredNotifications = {
        webhooks: next,
        desktop: desktop ? { kinds: [...new Set(desktop.kinds)], quietHours: desktop.quietHours ?? null } : before.desktop,
        consoleUrl: consoleUrl === undefined ? (before.consoleUrl ?? null) : consoleUrl,
      };
      this.write(stored);
      this.ctx.audit.append({
        type: 'notifications.update',
        actor,
        subject: 'settings:notifications',
        detail: {
          ...(why ? { reason: why } : {}),
          webhooks: next.map((w) => ({ id: w.id, url: maskUrl(w.url), events: w.events, format: w.format, enabled: w.enabled, urlChanged: before.webhooks.find((b) => b.id === w.id)?.url !== w.url })),
          removed: before.webhooks.filter((b) => !seen.has(b.id)).map((b) => b.id),
          desktop: stored.desktop,
          ...(consoleUrl !== undefined ? { consoleUrl } : {}),
        },
      });
      return this.view(made);
    });
  }
}
