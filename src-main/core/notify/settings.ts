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
 */
import { randomBytes } from 'node:crypto';
import { GafferError } from '../../common/errors';
import { INBOX_KINDS, notificationsInput, type DesktopNotifications, type NotificationSettingsView, type WebhookView } from '../../common/attention';
import { actorName, reason } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';
import { isSealed, type SecretBox } from '../secrets';
import { maskUrl } from './webhook-format';

/** A webhook as the core uses it: the fields the API shows, with `url` as given (unmasked, opened: invariant 1). */
export type StoredWebhook = Omit<WebhookView, 'lastDelivery'>;

export interface StoredNotifications {
  webhooks: StoredWebhook[];
  desktop: DesktopNotifications;
}

const KEY = 'notifications';
export const DEFAULT_NOTIFICATIONS: StoredNotifications = { webhooks: [], desktop: { kinds: [...INBOX_KINDS], quietHours: null } };

const putOpts = notificationsInput.extend({ actor: actorName, reason: reason.optional() });

export class NotificationSettings {
  private readonly q;
  private readonly row: SettingsRow<StoredNotifications>;

  constructor(
    private readonly ctx: CoreContext,
    private readonly secrets: SecretBox,
  ) {
    this.row = settingsRow(ctx.db, KEY);
    this.q = {
      lastDelivery: ctx.db.prepare<[string], { status: 'pending' | 'delivered' | 'dead'; updated_at: number; last_error: string | null }>(
        'SELECT status, updated_at, last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1',
      ),
    };
  }

  /** The stored configuration, secrets opened (core use only). */
  stored(): StoredNotifications {
    const s = { ...structuredClone(DEFAULT_NOTIFICATIONS), ...this.row.read() };
    return { ...s, webhooks: s.webhooks.map((w) => ({ ...w, url: this.secrets.open(w.url, 'webhook.url', `webhook ${w.id}'s URL`) })) };
  }

  private write(s: StoredNotifications): void {
    this.row.write({ ...s, webhooks: s.webhooks.map((w) => ({ ...w, url: this.secrets.seal(w.url, 'webhook.url') })) });
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

  /** What the API and the console show (invariant 1). */
  view(): NotificationSettingsView {
    const s = this.stored();
    return { webhooks: s.webhooks.map((w) => this.webhookView(w)), desktop: s.desktop };
  }

  private webhookView(w: StoredWebhook): WebhookView {
    const last = this.q.lastDelivery.get(w.id);
    return {
      id: w.id,
      name: w.name,
      url: maskUrl(w.url),
      events: w.events,
      format: w.format,
      enabled: w.enabled,
      lastDelivery: last ? { status: last.status, at: new Date(last.updated_at).toISOString(), error: last.last_error } : null,
    };
  }

  /** Replaces the configuration (invariant 2). */
  put(input: unknown): NotificationSettingsView {
    const { webhooks, desktop, actor, reason: why } = parseOrThrow(putOpts, input, 'notifications');
    return this.ctx.store.write(() => {
      const before = this.stored();
      const seen = new Set<string>();
      const next: StoredWebhook[] = webhooks.map((w, i) => {
        const old = w.id === undefined ? undefined : before.webhooks.find((b) => b.id === w.id);
        if (w.id !== undefined && !old) throw new GafferError('bad_request', `invalid notifications at "webhooks.${i}.id": there is no webhook ${w.id}`);
        const id = old?.id ?? `wh_${randomBytes(6).toString('base64url')}`;
        if (seen.has(id)) throw new GafferError('bad_request', `invalid notifications at "webhooks.${i}.id": webhook ${id} is listed twice`);
        seen.add(id);
        return {
          id,
          name: w.name ?? old?.name ?? null,
          url: w.url ?? old!.url,
          events: [...new Set(w.events)],
          format: w.format ?? old?.format ?? 'json',
          enabled: w.enabled ?? old?.enabled ?? true,
        };
      });
      const stored: StoredNotifications = {
        webhooks: next,
        desktop: desktop ? { kinds: [...new Set(desktop.kinds)], quietHours: desktop.quietHours ?? null } : before.desktop,
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
        },
      });
      return this.view();
    });
  }
}
