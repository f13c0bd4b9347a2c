/**
 * The attention part of the console's method table: `inbox.*`, `notifications.*` and the role
 * pauses, thin calls into `core.attention` and `core.jobs.pauses` (which validate again and audit
 * every action).
 *
 * 1. Arguments were parsed with the catalogue entry's `input` (common/ops) by the caller (methods.ts).
 * 2. Every state change passes the console's actor (`operator:desktop` / `operator:browser`).
 * 3. Webhook URLs come back masked (core/notify/settings.ts invariant 1).
 */
import type { ConsoleInput, ConsoleMethod, ConsoleResult } from '../../common/console-api';
import { GafferError } from '../../common/errors';
import type { Core } from '../../core/create-core';

export const ATTENTION_METHOD_PREFIXES = ['inbox.', 'notifications.', 'budgets.', 'roles.pause', 'roles.resume'] as const;

export type AttentionMethod = Extract<ConsoleMethod, `inbox.${string}` | `notifications.${string}` | `budgets.${string}` | 'roles.pauses' | 'roles.pause' | 'roles.resume'>;

/** True for the methods this file serves. */
export function isAttentionMethod(m: string): m is AttentionMethod {
  return ATTENTION_METHOD_PREFIXES.some((p) => m.startsWith(p));
}

type Args<M extends ConsoleMethod> = ConsoleInput<M>;
export type AttentionHandlers = { [M in AttentionMethod]: (args: Args<M>) => ConsoleResult<M> | Promise<ConsoleResult<M>> };

export function createAttentionHandlers(core: Core, actor: string): AttentionHandlers {
  const { inbox, notifications, webhooks } = core.attention;
  const pauses = core.jobs.pauses;
  const note = (n?: string) => (n ? { note: n } : {});
  return {
    'inbox.list': (a) => inbox.list(a),
    'inbox.counts': () => inbox.counts(),
    'inbox.get': (a) => inbox.get(a.id),
    'inbox.ack': (a) => inbox.ack(a.id, { ...note(a.note), actor }),
    'inbox.ackMany': (a) => inbox.ackMany({ ids: a.ids, ...note(a.note), actor }),
    'inbox.snooze': (a) => inbox.snooze(a.id, { until: a.until, ...note(a.note), actor }),
    'budgets.get': () => core.budgets.view(),
    'budgets.put': (a) => core.budgets.put({ ...a, actor }),
    'budgets.prices': () => core.prices.view(),
    'budgets.jobForecast': (a) => core.forecasts.job(a.jobId),
    'budgets.forecast': (a) => core.forecasts.usage(a.by ?? 'role'),
    'budgets.attemptSpend': (a) => {
      const s = core.reads.attemptSpend.of(a.subject);
      if (!s) throw new GafferError('not_found', `${a.subject.replace(':', ' ')} does not exist`);
      return s;
    },
    'budgets.putPrices': (a) => core.prices.put({ ...a, actor }),
    'roles.pauses': () => pauses.rolePauses(),
    'roles.pause': (a) => pauses.pauseRole(a.role, { reason: a.reason, actor, ...(a.until !== undefined ? { until: a.until } : {}) }),
    'roles.resume': (a) => pauses.resumeRole(a.role, { actor, ...(a.reason ? { reason: a.reason } : {}) }),
    'notifications.get': () => notifications.view(),
    'notifications.put': (a) => notifications.put({ ...a, actor }),
    'notifications.test': (a) => webhooks.test({ ...(a.webhookId ? { webhookId: a.webhookId } : {}), actor }),
    'notifications.deliveries': (a) => webhooks.list(a),
    'notifications.retryDelivery': (a) => webhooks.retry(a.id, { actor }),
    'notifications.rotateSecret': (a) => notifications.rotate(a.webhookId, { actor, ...(a.reason !== undefined ? { reason: a.reason } : {}) }),
  };
}
