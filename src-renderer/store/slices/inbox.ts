/**
 * The inbox slice: the items that need the operator (one filter at a time), their counts, and
 * where they are sent (webhooks, desktop notifications) with the recent deliveries.
 *
 * 1. A list carries the filter it was fetched for: a view shows it only while that filter is
 *    still selected (a slow answer for the previous filter never reads as the new one).
 * 2. Every action refreshes what it touched: the list, and the dashboard (the rail's badge).
 * 3. One item can be in focus (a deep link, `#/inbox?item=<id>`, the link a notification carries):
 *    it is fetched by id whatever its state, refreshed with the list, and an answer for an item
 *    no longer in focus is dropped.
 */
import type { Delivery, InboxCounts, InboxItem, InboxKind, NotificationSettingsView, NotificationsInput, WebhookSecret, WebhookTestResult } from '../../../src-main/common/attention';
import type { PerAttemptBudget } from '../../../src-main/common/schemas';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, loaderTopic, resourceLoader, type Slice, type SliceContext } from '../slice';

export type InboxStateFilter = 'open' | 'snoozed' | 'acked' | 'resolved';

export interface InboxFilter {
  state: InboxStateFilter;
  kind: InboxKind | null;
}

export interface InboxList {
  filter: InboxFilter;
  items: InboxItem[];
  /** More items than one page: the list says so (older ones are a click away). */
  more: boolean;
  counts: InboxCounts;
}

export interface NotificationsData {
  settings: NotificationSettingsView;
  /** The newest deliveries, and the dead ones (waiting for a retry by hand). */
  deliveries: Delivery[];
  dead: Delivery[];
}

export interface InboxState {
  inboxFilter: InboxFilter;
  inboxList: Resource<InboxList>;
  notifications: Resource<NotificationsData>;
  /** The item a deep link opened (invariant 3), and its id. */
  inboxFocusId: number | null;
  inboxFocus: Resource<InboxItem>;
}

export const INBOX_PAGE = 200;

export const initialInboxState = (): InboxState => ({ inboxFilter: { state: 'open', kind: null }, inboxList: emptyResource(), notifications: emptyResource(), inboxFocusId: null, inboxFocus: emptyResource() });

export interface InboxActions {
  setInboxFilter(patch: Partial<InboxFilter>): void;
  /** Brings one item into focus by id (null: none), whatever its state. */
  focusInboxItem(id: number | null): void;
  acknowledge(ids: number[], note: string | null): Promise<void>;
  snooze(id: number, until: string, note: string | null): Promise<void>;
  /** Resolves with the saved settings: a webhook this save added carries its whole secret, this once. */
  saveNotifications(input: NotificationsInput, reason: string | null): Promise<NotificationSettingsView>;
  /** A new signing secret for one webhook, returned this once. */
  rotateWebhookSecret(webhookId: string): Promise<WebhookSecret>;
  testWebhooks(webhookId: string | null): Promise<WebhookTestResult[]>;
  retryDelivery(id: number): Promise<void>;
  /** A held run: dispatched again with the approval (the note reaches the agent), or rejected. */
  /** `budget`: approving with a new spend cap for the next attempt (PROTOCOL §14). */
  decideRun(runId: string, decision: 'approve' | 'reject', note: string, budget?: PerAttemptBudget): Promise<void>;
}

export function createInboxSlice(ctx: SliceContext<InboxState>): Slice<InboxActions> {
  const list = resourceLoader(ctx, keyCell(ctx, 'inboxList'), async () => {
    const filter = ctx.get().inboxFilter;
    const [page, counts] = await Promise.all([ctx.call('inbox.list', { state: filter.state, limit: INBOX_PAGE, ...(filter.kind ? { kind: filter.kind } : {}) }), ctx.call('inbox.counts', {})]);
    return { filter, items: page.items, more: page.next !== null, counts };
  });
  const notifications = resourceLoader(ctx, keyCell(ctx, 'notifications'), async () => {
    const [settings, recent, dead] = await Promise.all([
      ctx.call('notifications.get', {}),
      ctx.call('notifications.deliveries', { limit: 20 }),
      ctx.call('notifications.deliveries', { status: 'dead', limit: 100 }),
    ]);
    return { settings, deliveries: recent.items, dead: dead.items };
  });

  let askedFocus: number | null = null;
  const focus = resourceLoader(
    ctx,
    {
      get: () => ctx.get().inboxFocus,
      // Invariant 3: only the answer for the item still in focus is kept.
      set: (r) => {
        if (askedFocus === ctx.get().inboxFocusId) ctx.set({ inboxFocus: r });
      },
    },
    () => {
      askedFocus = ctx.get().inboxFocusId;
      return askedFocus !== null ? ctx.call('inbox.get', { id: askedFocus }) : Promise.reject(new Error('no inbox item is in focus'));
    },
  );
  const refreshFocus = () => (ctx.get().inboxFocusId !== null ? focus.refresh() : Promise.resolve());

  const changed = async () => {
    await Promise.all([list.refresh(), refreshFocus()]);
    ctx.invalidate('dashboard');
  };

  const actions: InboxActions = {
    setInboxFilter(patch) {
      ctx.set({ inboxFilter: { ...ctx.get().inboxFilter, ...patch } });
      void list.refresh();
    },
    focusInboxItem(id) {
      if (ctx.get().inboxFocusId === id) return;
      ctx.set({ inboxFocusId: id, inboxFocus: emptyResource() });
      void refreshFocus();
    },
    acknowledge(ids, note) {
      return guarded(ctx.toast, ids.length === 1 ? 'acknowledge the item' : 'acknowledge the items', async () => {
        if (ids.length === 1) await ctx.call('inbox.ack', { id: ids[0]!, ...(note ? { note } : {}) });
        else {
          const r = await ctx.call('inbox.ackMany', { ids, ...(note ? { note } : {}) });
          ctx.toast('success', `Acknowledged ${r.acked.length} item${r.acked.length === 1 ? '' : 's'}`, r.skipped.length ? `${r.skipped.length} had been acknowledged already.` : undefined);
        }
        await changed();
      });
    },
    snooze(id, until, note) {
      return guarded(ctx.toast, 'snooze the item', async () => {
        await ctx.call('inbox.snooze', { id, until, ...(note ? { note } : {}) });
        await changed();
      });
    },
    saveNotifications(input, reason) {
      return guarded(ctx.toast, 'save the notification settings', async () => {
        const saved = await ctx.call('notifications.put', { ...input, ...(reason ? { reason } : {}) });
        ctx.toast('success', 'Notification settings saved');
        await notifications.refresh();
        return saved;
      });
    },
    rotateWebhookSecret(webhookId) {
      return guarded(ctx.toast, 'make a new secret', async () => {
        const r = await ctx.call('notifications.rotateSecret', { webhookId });
        await notifications.refresh();
        return r;
      });
    },
    testWebhooks(webhookId) {
      return guarded(ctx.toast, 'test the webhooks', async () => {
        const r = await ctx.call('notifications.test', webhookId ? { webhookId } : {});
        void notifications.refresh();
        return r;
      });
    },
    decideRun(runId, decision, note, budget) {
      return guarded(ctx.toast, decision === 'approve' ? 'approve the run' : 'reject the run', async () => {
        const run = decision === 'approve' ? await ctx.call('runs.approve', { id: runId, note, ...(budget ? { budget } : {}) }) : await ctx.call('runs.reject', { id: runId, note });
        ctx.toast('success', decision === 'approve' ? `Approved ${run.job} ${run.slot}` : `Rejected ${run.job} ${run.slot}`, decision === 'approve' ? 'It runs again; your note reaches the agent with it.' : 'It stays failed, marked rejected.');
        ctx.invalidate('runs');
        await changed();
      });
    },
    retryDelivery(id) {
      return guarded(ctx.toast, 'retry the delivery', async () => {
        await ctx.call('notifications.retryDelivery', { id });
        await notifications.refresh();
      });
    },
  };
  return {
    actions,
    topics: {
      inbox: {
        refresh: async () => {
          await Promise.all([list.refresh(), refreshFocus()]);
        },
        invalidate: () => {
          list.invalidate();
          if (ctx.get().inboxFocusId !== null) focus.invalidate();
        },
      },
      notifications: loaderTopic(notifications),
    },
    dispose() {
      list.dispose();
      focus.dispose();
      notifications.dispose();
    },
  };
}
