/**
 * The operator's attention (PROTOCOL §8): the inbox, what raises its items (events and checks),
 * and where they are sent (webhooks; the desktop shell shows OS notifications from the events).
 * Built once by `createCore`; `start()` arms its timers after the jobs module started.
 */
import type { Logger } from '../../common/logger';
import type { CoreContext } from '../context';
import type { JobSpec } from '../../common/job-schema';
import type { JobPlan } from '../jobs/plan';
import { NotificationSettings } from '../notify/settings';
import type { SecretBox } from '../secrets';
import { Webhooks, type WebhookOptions } from '../notify/webhooks';
import { InboxChecks } from './checks';
import { Inbox } from './inbox';
import { InboxSources } from './sources';

export { Inbox, type Occurrence } from './inbox';
export { InboxChecks } from './checks';
export { InboxSources, REPEATED_FAILURES } from './sources';

export interface AttentionDeps {
  ctx: CoreContext;
  logger: Logger;
  /** Webhook URLs are stored sealed with it (notify/settings.ts). */
  secrets: SecretBox;
  planOf(spec: JobSpec): JobPlan;
  webhooks?: WebhookOptions;
  /** More looks for the inbox's sweep (checks.ts). */
  sweeps?: Array<{ name: string; run(): void }>;
}

export interface Attention {
  readonly inbox: Inbox;
  readonly sources: InboxSources;
  readonly checks: InboxChecks;
  readonly notifications: NotificationSettings;
  readonly webhooks: Webhooks;
  start(): void;
  stop(): void;
}

export function createAttention(deps: AttentionDeps): Attention {
  const inbox = new Inbox(deps.ctx);
  const notifications = new NotificationSettings(deps.ctx, deps.secrets, deps.webhooks?.consoleUrl);
  const webhooks = new Webhooks(deps.ctx, notifications, deps.logger, deps.webhooks);
  const sources = new InboxSources(deps.ctx, inbox, deps.logger);
  const sweeps = deps.sweeps ?? [];
  const checks = new InboxChecks({ ctx: deps.ctx, inbox, logger: deps.logger, planOf: deps.planOf, sweeps });
  inbox.onRaised = (item) => webhooks.enqueue(item);
  inbox.onSnoozed = () => checks.armWake();
  // Listening starts at construction: an event of the core's start-up (a run held while the
  // runner catches up) must not slip past before `start()`.
  sources.start();
  return {
    inbox,
    sources,
    checks,
    notifications,
    webhooks,
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
