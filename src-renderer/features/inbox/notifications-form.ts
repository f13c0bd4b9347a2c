/**
 * The notifications form as the operator edits it, and the `notifications.put` it saves (pure).
 * A saved webhook's URL is never sent back by the server: its draft URL starts empty, and empty
 * means "keep the saved one".
 */
import { isTimeZone, type InboxKind, type NotificationSettingsView, type NotificationsInput, type WebhookFormat } from '../../../src-main/common/attention';

export interface HookDraft {
  /** React key (a saved webhook's id, or a new one's temporary key). */
  key: string;
  id: string | null;
  name: string;
  /** What the operator typed; empty keeps a saved webhook's URL. */
  url: string;
  maskedUrl: string | null;
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
}

export const FORMAT_LABELS: Record<WebhookFormat, string> = { json: 'JSON (any receiver)', slack: 'Slack incoming webhook', ntfy: 'ntfy topic' };

export function localZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function draftFromView(v: NotificationSettingsView): NotificationsDraft {
  const q = v.desktop.quietHours;
  return {
    webhooks: v.webhooks.map((w) => ({ key: w.id, id: w.id, name: w.name ?? '', url: '', maskedUrl: w.url, events: [...w.events], format: w.format, enabled: w.enabled })),
    desktopKinds: [...v.desktop.kinds],
    quiet: q !== null,
    quietStart: q?.start ?? '22:00',
    quietEnd: q?.end ?? '07:00',
    quietZone: q?.timezone ?? localZone(),
  };
}

export function draftToInput(d: NotificationsDraft): NotificationsInput {
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
  const hhmm = /^(?:[01]\d|2[0-3]):[0-5]\d$/;
  if (d.quiet && (!hhmm.test(d.quietStart) || !hhmm.test(d.quietEnd))) out.push({ index: null, message: 'Quiet hours need a start and an end time.' });
  if (d.quiet && d.quietStart === d.quietEnd) out.push({ index: null, message: 'Quiet hours that start and end at the same time are never quiet.' });
  return out;
}
