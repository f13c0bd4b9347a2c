/**
 * What a webhook receives: the request for one inbox item in the webhook's format. Pure.
 *
 * Every body carries at least `kind`, `title`, `subject`, `at` (PROTOCOL §8) and `url`, the item's
 * page in the console (§12), whatever the format: Slack and ntfy ignore fields they do not know.
 * Signing (`signatureHeader`) is over the body exactly as sent.
 * - `json`: the item as the API shows it (no evidence: that stays in Gaffer).
 * - `slack`: an incoming-webhook message (`text` in Slack's mrkdwn).
 * - `ntfy`: ntfy's JSON publish — POSTed to the server's root with the topic from the URL's last
 *   path segment, priority from the severity.
 */
import { createHmac } from 'node:crypto';
import type { InboxItem, WebhookFormat } from '../../common/attention';

/** What is sent about an item (a test sends one of these too). */
export type Notice = Pick<InboxItem, 'severity' | 'subject' | 'title' | 'detail' | 'at' | 'lastAt' | 'count' | 'state'> & {
  id: number | null;
  /** The item's page in the console. */
  url: string;
  /** An inbox kind, or `test` for the Test button. */
  kind: InboxItem['kind'] | 'test';
  test?: boolean;
};

export interface WebhookRequest {
  url: string;
  body: string;
  /** Headers the format needs besides the signature (ntfy's `Click`). */
  headers: Record<string, string>;
}

/**
 * `Gaffer-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>` (PROTOCOL §12).
 * The time is inside the signed text, so a receiver can refuse a replay of an old delivery.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

const SLACK_MARK: Record<InboxItem['severity'], string> = { critical: ':rotating_light:', warning: ':warning:', info: ':information_source:' };
const NTFY_PRIORITY: Record<InboxItem['severity'], number> = { critical: 5, warning: 4, info: 3 };

export function webhookRequest(url: string, format: WebhookFormat, n: Notice): WebhookRequest {
  const common = { id: n.id, kind: n.kind, severity: n.severity, title: n.title, subject: n.subject, at: n.at, url: n.url };
  switch (format) {
    case 'json':
      return {
        url,
        body: JSON.stringify({ ...common, detail: n.detail, lastAt: n.lastAt, count: n.count, state: n.state, ...(n.test ? { test: true } : {}) }),
        headers: {},
      };
    case 'slack': {
      const more = n.count > 1 ? ` (${n.count} occurrences)` : '';
      const text = `${SLACK_MARK[n.severity]} *${escapeSlack(n.title)}*${more}\n${escapeSlack(n.detail)}\n<${n.url}|Open in Gaffer>`;
      return { url, body: JSON.stringify({ text, ...common }), headers: {} };
    }
    case 'ntfy': {
      const u = new URL(url);
      const segments = u.pathname.split('/').filter(Boolean);
      const topic = decodeURIComponent(segments.pop() ?? '');
      u.pathname = `/${segments.join('/')}`;
      // `click` (and the Click header) make the phone's notification open the item in the console.
      return {
        url: u.toString(),
        body: JSON.stringify({ ...common, topic, message: n.detail || n.title, priority: NTFY_PRIORITY[n.severity], tags: [n.kind], click: n.url }),
        headers: { Click: n.url },
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
