/**
 * What a webhook receives: the request for one inbox item in the webhook's format. Pure.
 *
 * Every body carries at least `kind`, `title`, `subject` and `at` (PROTOCOL §8), whatever the
 * format: Slack and ntfy ignore fields they do not know.
 * - `json`: the item as the API shows it (no evidence: that stays in Gaffer).
 * - `slack`: an incoming-webhook message (`text` in Slack's mrkdwn).
 * - `ntfy`: ntfy's JSON publish — POSTed to the server's root with the topic from the URL's last
 *   path segment, priority from the severity.
 */
import type { InboxItem, WebhookFormat } from '../../common/attention';

/** What is sent about an item (a test sends one of these too). */
export type Notice = Pick<InboxItem, 'severity' | 'subject' | 'title' | 'detail' | 'at' | 'lastAt' | 'count' | 'state'> & {
  id: number | null;
  /** An inbox kind, or `test` for the Test button. */
  kind: InboxItem['kind'] | 'test';
  test?: boolean;
};

export interface WebhookRequest {
  url: string;
  body: string;
}

const SLACK_MARK: Record<InboxItem['severity'], string> = { critical: ':rotating_light:', warning: ':warning:', info: ':information_source:' };
const NTFY_PRIORITY: Record<InboxItem['severity'], number> = { critical: 5, warning: 4, info: 3 };

export function webhookRequest(url: string, format: WebhookFormat, n: Notice): WebhookRequest {
  const common = { kind: n.kind, title: n.title, subject: n.subject, at: n.at };
  switch (format) {
    case 'json':
      return {
        url,
        body: JSON.stringify({ ...common, id: n.id, severity: n.severity, detail: n.detail, lastAt: n.lastAt, count: n.count, state: n.state, ...(n.test ? { test: true } : {}) }),
      };
    case 'slack': {
      const more = n.count > 1 ? ` (${n.count} occurrences)` : '';
      return { url, body: JSON.stringify({ text: `${SLACK_MARK[n.severity]} *${escapeSlack(n.title)}*${more}\n${escapeSlack(n.detail)}`, ...common }) };
    }
    case 'ntfy': {
      const u = new URL(url);
      const segments = u.pathname.split('/').filter(Boolean);
      const topic = decodeURIComponent(segments.pop() ?? '');
      u.pathname = `/${segments.join('/')}`;
      return {
        url: u.toString(),
        body: JSON.stringify({ ...common, topic, message: n.detail || n.title, priority: NTFY_PRIORITY[n.severity], tags: [n.kind] }),
      };
    }
  }
}

/** Slack mrkdwn: `&`, `<` and `>` are the only characters to escape. */
function escapeSlack(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * A URL as it may be shown (API, console, audit, logs): scheme, host and port, and at most the
 * first few characters of the path — never user info, and never more than a third of the rest,
 * because tokens live there (`/services/T…/B…/secret`, an ntfy topic, `?token=`).
 */
export function maskUrl(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return '(invalid URL)';
  }
  const rest = `${u.pathname}${u.search}`.replace(/^\//, '');
  const shown = rest.slice(0, Math.min(4, Math.floor(rest.length / 3)));
  return `${u.protocol}//${u.host}/${shown}${rest.length > shown.length ? '…' : ''}`;
}
