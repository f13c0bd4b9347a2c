/**
 * The notifications form as the operator edits it, and the `notifications.put` it saves (pure).
 * A saved webhook's URL is never sent back by the server: its draft URL starts empty, and empty
 * means "keep the saved one". Its signing secret comes back masked, except in the reply to the
 * save that added it (and to a rotation): that whole secret is shown to the operator once.
 */
import { DEFAULT_WEBHOOK_EVENTS, isTimeZone, type Delivery, type InboxKind, type NotificationSettingsView, type NotificationsInput, type WebhookFormat } from '../../../src-main/common/attention';

export interface HookDraft {
  /** React key (a saved webhook's id, or a new one's temporary key). */
  key: string;
  id: string | null;
  name: string;
  /** What the operator typed; empty keeps a saved webhook's URL. */
  url: string;
  maskedUrl: string | null;
  /** A saved webhook's signing secret, masked (`whsec_…abcd`). */
  maskedSecret: string | null;
  events: InboxKind[];
  format: WebhookFormat;
  enabled: boolean;
}

export interface NotificationsDraft {
  webhooks: HookDraft[];
  desktopKinds: InboxKind[];
  quiet: boolean;
  quietStart: string;
  quietEnd: string;
  /** The zone quiet hours are read in: as saved, or this machine's. */
  quietZone: string;
  /** Where notifications link to; empty: the default (`consoleUrlDefault`, Gaffer's own address). */
  consoleUrl: string;
  /** As saved ('' for the default): the save sends the address only when it changed. */
  consoleUrlSaved: string;
  consoleUrlDefault: string;
}

export const FORMAT_LABELS: Record<WebhookFormat, string> = { json: 'JSON (any receiver)', slack: 'Slack incoming webhook', ntfy: 'ntfy topic' };

export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function draftFromView(v: NotificationSettingsView): NotificationsDraft {
  const q = v.desktop.quietHours;
  return {
    webhooks: v.webhooks.map((w) => ({ key: w.id, id: w.id, name: w.name ?? '', url: '', maskedUrl: w.url, maskedSecret: w.secret, events: [...w.events], format: w.format, enabled: w.enabled })),
    desktopKinds: [...v.desktop.kinds],
    quiet: q !== null,
    quietStart: q?.start ?? '22:00',
    quietEnd: q?.end ?? '07:00',
    quietZone: q?.timezone ?? localZone(),
    consoleUrl: v.consoleUrlSet ? v.consoleUrl : '',
    consoleUrlSaved: v.consoleUrlSet ? v.consoleUrl : '',
    consoleUrlDefault: v.consoleUrlSet ? '' : v.consoleUrl,
  };
}

/** A webhook the operator is adding: every critical and warning kind ticked (the server's default too). */
export function newHookDraft(key: string): HookDraft {
  return { key, id: null, name: '', url: '', maskedUrl: null, maskedSecret: null, events: [...DEFAULT_WEBHOOK_EVENTS], format: 'json', enabled: true };
}

/** A secret as every read but one shows it: `whsec_…` and its last four characters. */
export function isMaskedSecret(secret: string): boolean {
  return secret.includes('…');
}

/** A secret shown this once: copied into the receiver now, or made again with New secret. */
export interface RevealedSecret {
  webhookId: string;
  /** The webhook's name, or its masked URL. */
  label: string;
  secret: string;
}

/** The whole secrets in a reply to `notifications.put`: those of the webhooks that save added. */
export function revealedSecrets(reply: NotificationSettingsView): RevealedSecret[] {
  return reply.webhooks.filter((w) => !isMaskedSecret(w.secret)).map((w) => ({ webhookId: w.id, label: w.name || w.url, secret: w.secret }));
}

/** One delivery in words: what was sent (the item's title), and to which webhook (its name, else its masked URL). */
export function deliveryWords(d: Pick<Delivery, 'kind' | 'itemTitle' | 'webhookId'>, webhooks: ReadonlyArray<{ id: string; name: string | null; url: string }>): { what: string; to: string } {
  const w = webhooks.find((x) => x.id === d.webhookId);
  return {
    what: d.kind === 'test' ? 'Test notice' : (d.itemTitle ?? 'an item that is no longer in the inbox'),
    to: w ? w.name || w.url : 'a removed webhook',
  };
}

export function draftToInput(d: NotificationsDraft): NotificationsInput {
  const consoleUrl = d.consoleUrl.trim();
  return {
    webhooks: d.webhooks.map((h) => ({
      ...(h.id ? { id: h.id } : {}),
      ...(h.name.trim() ? { name: h.name.trim() } : {}),
      ...(h.url.trim() ? { url: h.url.trim() } : {}),
      events: h.events,
      format: h.format,
      enabled: h.enabled,
    })),
    desktop: {
      kinds: d.desktopKinds,
      quietHours: d.quiet ? { start: d.quietStart, end: d.quietEnd, ...(isTimeZone(d.quietZone) ? { timezone: d.quietZone } : {}) } : null,
    },
    // Empty goes back to the default (null); unchanged is left out (the server keeps it).
    ...(consoleUrl !== d.consoleUrlSaved ? { consoleUrl: consoleUrl || null } : {}),
  };
}

export interface DraftProblem {
  /** The webhook it is about, or null for the desktop settings. */
  index: number | null;
  message: string;
}

function urlProblem(url: string): string | null {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return 'The URL must start with http:// or https://.';
    return null;
  } catch {
    return 'That is not a URL.';
  }
}

/** What the server would refuse, said before saving. */
export function draftProblems(d: NotificationsDraft): DraftProblem[] {
  const out: DraftProblem[] = [];
  d.webhooks.forEach((h, index) => {
    if (!h.id && !h.url.trim()) out.push({ index, message: 'A new webhook needs its URL.' });
    else if (h.url.trim()) {
      const p = urlProblem(h.url.trim());
      if (p) out.push({ index, message: p });
    }
    if (h.events.length === 0) out.push({ index, message: 'Choose at least one kind of item to send.' });
  });
  if (d.consoleUrl.trim()) {
    const p = urlProblem(d.consoleUrl.trim());
    if (p) out.push({ index: null, message: `Console address: ${p}` });
  }
  const hhmm = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
  if (d.quiet && (!hhmm.test(d.quietStart) || !hhmm.test(d.quietEnd))) out.push({ index: null, message: 'Quiet hours need a start and an end time.' });
  if (d.quiet && d.quietStart === d.quietEnd) out.push({ index: null, message: 'Quiet hours that start and end at the same time are never quiet.' });
  return out;
}
