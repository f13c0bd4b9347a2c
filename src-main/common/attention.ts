/**
 * The operator's attention on the wire (PROTOCOL §8): inbox items, their lifecycle, and where
 * they are sent (webhooks, desktop notifications). Shared by the core, the HTTP API, the console
 * and the renderer; field names of §8 are fixed, everything else is an addition.
 */
import { z } from 'zod';
import { canonicalZoneOrAsTyped } from './time-zone';
import { hhmm } from './job-schema';

// ---- Inbox ------------------------------------------------------------------------------------

/** Kinds of inbox item. PROTOCOL §8 names the first seven "at least"; the rest are additions. */
export const INBOX_KINDS = [
  'needs_human',
  'missed',
  'skipped_alert',
  'budget',
  'stuck_queue',
  'instance_lost',
  'dead_man',
  'held',
  'repeated_failures',
  // PROTOCOL §12: raised at once, never only after repeats.
  'run_failed',
  'task_failed',
  'crash_looping',
  'webhook_dead',
  'storage_fault',
  // PROTOCOL §13: the checks failed and the declaration says a human decides.
  'verify_failed',
  // PROTOCOL §14.
  'loop_breaker',
  'quota',
] as const;
export type InboxKind = (typeof INBOX_KINDS)[number];

/** Who runs a task's or run's checks and moves it on by their outcome (PROTOCOL §13; the audit's actor). */
export const VERIFY_ACTOR = 'gaffer:verify';

/** Who takes a task's lock away for its spend cap (the audit's actor, the task event's `actor`). */
export const BUDGET_ACTOR = 'budget';

/** `acked`: the operator dealt with it; `resolved`: Gaffer saw its cause go away (PROTOCOL §12). */
export const INBOX_STATES = ['open', 'snoozed', 'acked', 'resolved'] as const;
export type InboxState = (typeof INBOX_STATES)[number];

export type InboxSeverity = 'critical' | 'warning' | 'info';

/** A kind's severity is fixed: the same thing is always as urgent. */
export const INBOX_SEVERITY: Record<InboxKind, InboxSeverity> = {
  needs_human: 'critical',
  budget: 'critical',
  dead_man: 'critical',
  run_failed: 'critical',
  crash_looping: 'critical',
  storage_fault: 'critical',
  verify_failed: 'warning',
  loop_breaker: 'critical',
  quota: 'warning',
  held: 'warning',
  task_failed: 'warning',
  webhook_dead: 'warning',
  missed: 'warning',
  skipped_alert: 'warning',
  stuck_queue: 'warning',
  instance_lost: 'warning',
  repeated_failures: 'warning',
};

/** Plain words for each kind (UI filters, notification titles). */
export const INBOX_KIND_LABELS: Record<InboxKind, string> = {
  needs_human: 'Needs a human',
  missed: 'Missed slots',
  skipped_alert: 'Skipped slots',
  budget: 'Spend cap',
  stuck_queue: 'Stuck queue',
  instance_lost: 'Instance lost',
  dead_man: 'Did not start',
  held: 'Held for review',
  repeated_failures: 'Repeated failures',
  run_failed: 'Run failed',
  task_failed: 'Task failed',
  crash_looping: 'Agent crash looping',
  webhook_dead: 'Notification undelivered',
  storage_fault: 'Storage fault',
  verify_failed: 'Checks failed',
  loop_breaker: 'Same error again and again',
  quota: 'Spend window used up',
};

export interface InboxItem {
  id: number;
  kind: InboxKind;
  severity: InboxSeverity;
  /** What it is about, as `run:<id>`, `task:<id>`, `job:<id>`, `role:<name>`, `instance:<id>`, `budget:<scope>`, `audit:log`. */
  subject: string;
  title: string;
  detail: string;
  /** When the item was raised (its first occurrence). */
  at: string;
  /** Its latest occurrence: an open item absorbs later occurrences of the same kind and subject. */
  lastAt: string;
  /** Occurrences folded into this item (12 slots missed while asleep: one item, count 12). */
  count: number;
  state: InboxState;
  snoozedUntil: string | null;
  ackedAt: string | null;
  ackedBy: string | null;
  /** The operator's note on acknowledging or snoozing. */
  note: string | null;
  /** When Gaffer resolved it (its cause went away), and why, in words. */
  resolvedAt: string | null;
  resolution: string | null;
  /** What the item was raised from: the run's error and output, the slots, the locks, … */
  evidence: Record<string, unknown>;
  updatedAt: string;
}

export interface InboxCounts {
  /** Open items (snoozed ones are not counted until they wake). */
  open: number;
  snoozed: number;
  /** Open items of severity critical. */
  critical: number;
  byKind: Partial<Record<InboxKind, number>>;
}

const note = z.string().trim().max(2000);
const instant = z.iso.datetime({ offset: true });

export const inboxListInput = z.strictObject({
  /** `open` (default): what needs the operator now; `all`: every state. */
  state: z.enum([...INBOX_STATES, 'all']).optional(),
  kind: z.enum(INBOX_KINDS).optional(),
  subject: z.string().min(1).max(300).optional(),
  limit: z.number().int().min(1).max(500).optional(),
  /** The previous page's `next`. */
  after: z.string().min(1).max(200).optional(),
});
export type InboxListInput = z.infer<typeof inboxListInput>;

export const inboxAckInput = z.strictObject({ note: note.optional() });
export const inboxAckManyInput = z.strictObject({ ids: z.array(z.number().int().positive()).min(1).max(1000), note: note.optional() });
export const inboxSnoozeInput = z.strictObject({ until: instant, note: note.optional() });

// ---- Notifications ------------------------------------------------------------------------------

export const WEBHOOK_FORMATS = ['json', 'slack', 'ntfy'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * `user:pass@` in a URL can never be delivered: `fetch` refuses to build a request from it (and a
 * header would be the place for a credential anyway). Refused at save, naming the field, rather
 * than accepted and then dead on every delivery.
 */
function hasNoUserInfo(s: string): boolean {
  try {
    const u = new URL(s);
    return u.username === '' && u.password === '';
  } catch {
    return true; // not a URL at all: isHttpUrl says so
  }
}

export const webhookUrl = z
  .string()
  .trim()
  .max(2000)
  .refine(isHttpUrl, 'a webhook URL is http:// or https:// with a host')
  .refine(hasNoUserInfo, 'a webhook URL may not carry a user name or password ("user:pass@host"): it could never be delivered; put the secret in the path or query, as Slack and ntfy do');
/** An IANA zone, stored under its canonical spelling (`europe/berlin` → `Europe/Berlin`). */
export const timeZone = z.string().min(1).max(100).refine(isTimeZone, 'an IANA time zone such as Europe/Berlin').transform(canonicalZoneOrAsTyped);
export const webhookId = z.string().regex(/^wh_[A-Za-z0-9_-]{1,40}$/, 'a webhook id looks like wh_…');

export const webhookInput = z
  .strictObject({
    /** Keeps an existing webhook (and, without `url`, its stored URL: secrets are never sent back). */
    id: webhookId.optional(),
    name: z.string().trim().max(100).optional(),
    url: webhookUrl.optional(),
    /** Inbox kinds POSTed to this webhook. Default for a new webhook: every critical and warning kind. */
    events: z.array(z.enum(INBOX_KINDS)).min(1, 'choose at least one kind of item to send').max(INBOX_KINDS.length).optional(),
    format: z.enum(WEBHOOK_FORMATS).optional(),
    enabled: z.boolean().optional(),
  })
  .refine((w) => w.url !== undefined || w.id !== undefined, { message: 'a new webhook needs a url', path: ['url'] });
export type WebhookInput = z.infer<typeof webhookInput>;

export const quietHoursInput = z.strictObject({
  /** Local time of day the quiet starts, `HH:MM`; it may run past midnight (22:00–07:00). */
  start: hhmm,
  end: hhmm,
  /** Default: the operator's zone (the machine's). */
  timezone: timeZone.optional(),
});
export type QuietHours = z.infer<typeof quietHoursInput>;

export const desktopInput = z.strictObject({
  /** Inbox kinds shown as OS notifications (the desktop app only). */
  kinds: z.array(z.enum(INBOX_KINDS)).max(INBOX_KINDS.length),
  quietHours: quietHoursInput.nullable().optional(),
});
export type DesktopNotifications = { kinds: InboxKind[]; quietHours: QuietHours | null };

/** The kinds a new webhook sends when it names none: every critical and warning kind. */
export const DEFAULT_WEBHOOK_EVENTS: InboxKind[] = INBOX_KINDS.filter((k) => INBOX_SEVERITY[k] !== 'info');

/** `PUT /notifications`: the whole configuration (webhooks left out are removed). */
export const notificationsInput = z.strictObject({
  webhooks: z.array(webhookInput).max(20),
  desktop: desktopInput.optional(),
  /** Where the console is reached, for the `url` link each notification carries (default: the server's own address). `null` goes back to the default. */
  consoleUrl: webhookUrl.nullable().optional(),
});
export type NotificationsInput = z.infer<typeof notificationsInput>;

export const DELIVERY_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface WebhookView {
  id: string;
  name: string | null;
  /** Masked: the scheme, the host and the first characters of the path; tokens never leave Gaffer. */
  url: string;
  events: InboxKind[];
  format: WebhookFormat;
  enabled: boolean;
  /**
   * The key deliveries are signed with (`Gaffer-Signature`). Whole only in the reply to the PUT
   * that added the webhook and to a rotation; masked (`whsec_…` and its last 4 characters) after.
   */
  secret: string;
  lastDelivery: { status: DeliveryStatus; at: string; error: string | null } | null;
}

export interface NotificationSettingsView {
  webhooks: WebhookView[];
  desktop: DesktopNotifications;
  /** The console link's base in every notification; `consoleUrlDefault` when none was set. */
  consoleUrl: string;
  consoleUrlSet: boolean;
}

/** `POST /notifications/webhooks/{id}/rotate`: the new secret, shown this once. */
export interface WebhookSecret {
  webhookId: string;
  secret: string;
}

export interface Delivery {
  id: number;
  webhookId: string;
  /** The inbox item sent (null for a test), and its title. */
  itemId: number | null;
  itemTitle: string | null;
  kind: InboxKind | 'test';
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAt: string | null;
  lastError: string | null;
  /** HTTP status of the last attempt, if one came back. */
  lastStatus: number | null;
  createdAt: string;
  updatedAt: string;
  deliveredAt: string | null;
}

export const deliveriesListInput = z.strictObject({
  status: z.enum(DELIVERY_STATUSES).optional(),
  webhookId: webhookId.optional(),
  limit: z.number().int().min(1).max(500).optional(),
  after: z.number().int().positive().optional(),
});

export const notificationsTestInput = z.strictObject({ webhookId: webhookId.optional() });

export interface WebhookTestResult {
  webhookId: string;
  url: string;
  ok: boolean;
  status: number | null;
  error: string | null;
  ms: number;
}

// ---- Quiet hours (pure; the desktop shell decides with it) --------------------------------------

/** Minutes since local midnight of `at` in `zone`. */
export function localMinutes(at: number, zone: string): number {
  const parts = new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(new Date(at));
  const h = Number(parts.find((p) => p.type === 'hour')?.value ?? 0);
  const m = Number(parts.find((p) => p.type === 'minute')?.value ?? 0);
  return h * 60 + m;
}

function minutesOf(hm: string): number {
  const [h, m] = hm.split(':').map(Number) as [number, number];
  return h * 60 + m;
}

/** True when `at` falls in the quiet hours (a range may run past midnight; start = end is never quiet). */
export function inQuietHours(q: QuietHours | null, at: number, defaultZone: string): boolean {
  if (!q) return false;
  const now = localMinutes(at, q.timezone ?? defaultZone);
  const s = minutesOf(q.start);
  const e = minutesOf(q.end);
  if (s === e) return false;
  return s < e ? now >= s && now < e : now >= s || now < e;
}

// ---- Spend caps (PROTOCOL §8) ------------------------------------------------------------------

const usd = z.number().positive().max(10_000_000);

/**
 * A rolling spend window (PROTOCOL §14), e.g. the 5 hours and 168 hours of a subscription-billed
 * CLI: while the tokens or cost of the last `hours` reach a cap, nothing of its scope is
 * dispatched or claimed.
 */
export const spendWindow = z
  .strictObject({
    scope: z.enum(['global', 'role']),
    role: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a role is 1–64 letters, digits, "_", "-" or "."').optional(),
    hours: z.number().positive().max(24 * 31),
    maxTokens: z.number().int().positive().max(1e13).optional(),
    maxCostUsd: usd.optional(),
  })
  .refine((w) => w.maxTokens !== undefined || w.maxCostUsd !== undefined, { message: 'a window needs maxTokens or maxCostUsd' })
  .refine((w) => (w.scope === 'role') === (w.role !== undefined), { message: 'a role window names its role; a global one names none' });
export type SpendWindow = z.infer<typeof spendWindow>;

/** One spend window now: what the last `hours` spent against its caps, and when it frees if used up. */
export interface WindowStatus extends SpendWindow {
  tokens: number;
  costUsd: number;
  reached: boolean;
  /** When enough of the spend leaves the window for it to be under its caps again (ISO), while reached. */
  freesAt: string | null;
  /** The window in words ("the 5-hour window for role dev"). */
  name: string;
}

/** `PUT /job-settings/budgets`: a field left out keeps its cap; `null` removes it. */
export const budgetsInput = z.strictObject({
  globalDailyUsd: usd.nullable().optional(),
  /** Merged into the stored caps; a role set to `null` loses its cap. */
  perRoleDailyUsd: z.record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a role is 1–64 letters, digits, "_", "-" or "."'), usd.nullable()).optional(),
  /** The day of a daily cap runs midnight to midnight in this zone (default: the operator's, the machine's). */
  timezone: timeZone.nullable().optional(),
  /** PROTOCOL §14: rolling spend windows; the list given replaces the stored one (`[]` removes them all). */
  windows: z.array(spendWindow).max(20).optional(),
});
export type BudgetsInput = z.infer<typeof budgetsInput>;

export interface BudgetSettings {
  globalDailyUsd: number | null;
  perRoleDailyUsd: Record<string, number>;
  timezone: string | null;
  windows?: SpendWindow[];
}

/** One daily cap today: spend so far against it, and when it resets. */
export interface CapStatus {
  scope: 'global' | 'role';
  role: string | null;
  capUsd: number;
  spentUsd: number;
  reached: boolean;
}

export interface BudgetsView {
  settings: BudgetSettings;
  /** The zone the day is counted in, the local day, and the next midnight there (when every cap resets). */
  zone: string;
  day: string;
  resetsAt: string;
  /** False until an agent reports usage (`usage` frames): spend reads 0 until then. */
  measured: boolean;
  caps: CapStatus[];
  /** The rolling spend windows now (PROTOCOL §14). */
  windows?: WindowStatus[];
}
