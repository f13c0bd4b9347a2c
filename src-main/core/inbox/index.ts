/**
 * The operator's attention (PROTOCOL §8): the inbox, what raises its items (events and checks),
 * and where they are sent (webhooks; the desktop shell shows OS notifications from the events).
 * Built by `createCore` in two steps: `createInbox` first (others raise items), `createAttention`
 * once the jobs module and the budgets stand; `start()` arms its timers after the jobs module started.
 */
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { JobSpec } from '../../common/job-schema';
import type { JobPlan } from '../jobs';
import type { SecretBox } from '../secrets';
import { NotificationSettings, Webhooks, type WebhookOptions } from '../notify';
import { InboxChecks } from './checks';
import { Inbox } from './inbox';
import { InboxSources } from './sources';
import { Late } from '../wiring';

export { Inbox, type Occurrence } from './inbox';
export { InboxChecks } from './checks';
export { InboxSources, REPEATED_FAILURES } from './sources';

/** What the inbox needs when it is built (before the jobs and budgets modules, which raise items). */
export interface InboxDeps {
  ctx: CoreContext;
  logger: Logger;
  /** Webhook URLs are stored sealed with it (notify/settings.ts). */
  secrets: SecretBox;
  webhooks?: WebhookOptions;
}

/** The inbox and where its items are sent; `createAttention` adds what raises and wakes them. */
export interface InboxPart {
  readonly inbox: Inbox;
  readonly notifications: NotificationSettings;
  readonly webhooks: Webhooks;
  /** What raises items from the core's events (listening from construction on). */
  readonly sources: InboxSources;
  /** The checks' wake-up after a snooze, filled by `createAttention` (core/wiring.ts). */
  readonly snoozed: Late<() => void>;
}

/** What the checks and sources need, built after the jobs module (its plans) and the budgets (their sweeps). */
export interface AttentionDeps {
  ctx: CoreContext;
  logger: Logger;
  planOf(spec: JobSpec): JobPlan;
  /** More looks for the inbox's sweep (checks.ts): the spend caps'. */
  sweeps: Array<{ name: string; run(): void }>;
}

export interface Attention extends InboxPart {
  readonly checks: InboxChecks;
  start(): void;
  stop(): void;
}

/** The inbox, its notification settings, webhook outbox and event sources (built first: the audit check, budgets and jobs raise items). */
export function createInbox(deps: InboxDeps): InboxPart {
  const notifications = new NotificationSettings(deps.ctx, deps.secrets, deps.webhooks?.consoleUrl);
  const webhooks = new Webhooks(deps.ctx, notifications, deps.logger, deps.webhooks);
  const snoozed = new Late<() => void>('the checks\' wake-up after a snooze', 'the inbox');
  const inbox = new Inbox(deps.ctx, { raised: (item) => webhooks.enqueue(item), snoozed });
  const sources = new InboxSources(deps.ctx, inbox, deps.logger);
  // Listening starts at construction: an event of the core's start-up (a run held while the
  // runner catches up) must not slip past before `start()`.
  sources.start();
  return { inbox, notifications, webhooks, sources, snoozed };
}

/** The checks and the event sources over the inbox; `start()` arms their timers after the jobs module started. */
export function createAttention(part: InboxPart, deps: AttentionDeps): Attention {
  const { inbox, notifications, webhooks, sources } = part;
  const checks = new InboxChecks({ ctx: deps.ctx, inbox, logger: deps.logger, planOf: deps.planOf, sweeps: deps.sweeps });
  part.snoozed.provide(() => checks.armWake(), 'the inbox checks');
  return {
    ...part,
    checks,
    start() {
      notifications.ensureSecrets();
      sources.reconcile();
      webhooks.start();
      checks.start();
    },
    stop() {
      checks.stop();
      webhooks.stop();
      sources.stop();
    },
  };
}
