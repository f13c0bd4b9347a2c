/** The operator's attention (PROTOCOL §8): the inbox, notifications, spend caps and role pauses. */
import { z } from 'zod';
import {
  budgetsInput,
  deliveriesListInput,
  inboxListInput,
  inboxSnoozeInput,
  notificationsInput,
  webhookId,
  type BudgetsView,
  type Delivery,
  type InboxCounts,
  type InboxItem,
  type NotificationSettingsView,
  type WebhookSecret,
  type WebhookTestResult,
} from '../attention';
import { pauseUntil, type RolePause } from '../job-schema';
import type { Page } from '../model';
import { reason, roleName } from '../schemas';
import { op } from './define';
import { budgetsView, delivery, inboxCounts, inboxItem, notificationSettingsView, page, rolePause, webhookSecret, webhookTestResult } from './shapes';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;
const inboxId = z.number().int().positive();
const inboxNote = z.string().trim().max(2000);
const itemReply = z.object({ item: inboxItem });
const budgetsReply = z.object({ budgets: budgetsView });
const pauseReply = z.object({ pause: rolePause });

export const attentionOps = {
  'inbox.list': op<Page<InboxItem>>()({
    summary: 'Inbox items, latest occurrence first (`state` defaults to open).',
    input: inboxListInput,
    result: page(inboxItem),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/inbox', status: { 200: '`{items: [{id, kind, severity, subject, title, detail, at, state, …}], next}`' } }],
  }),
  'inbox.counts': op<InboxCounts>()({
    summary: 'Open and snoozed items, open critical ones, open ones by kind.',
    input: empty,
    result: inboxCounts,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/inbox/counts', status: { 200: '`{counts}`' }, response: z.object({ counts: inboxCounts }) }],
  }),
  'inbox.get': op<InboxItem>()({
    summary: 'One inbox item, with its evidence.',
    input: z.strictObject({ id: inboxId }),
    result: inboxItem,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/inbox/:id', status: { 200: '`{item}`' }, response: itemReply }],
  }),
  'inbox.ack': op<InboxItem>()({
    summary: 'Acknowledge an item, with an optional note.',
    input: z.strictObject({ id: inboxId, note: inboxNote.optional() }),
    result: inboxItem,
    callers: BOTH,
    reason: 'optional',
    reasonField: 'note',
    rest: [{ method: 'POST', path: '/inbox/:id/ack', status: { 200: '`{item}`' }, response: itemReply }],
  }),
  /** Acknowledges several items; ones acknowledged meanwhile are reported as skipped. */
  'inbox.ackMany': op<{ acked: InboxItem[]; skipped: number[] }>()({
    summary: 'Acknowledge several items; ones acknowledged meanwhile are listed in `skipped`.',
    input: z.strictObject({ ids: z.array(inboxId).min(1).max(1000), note: inboxNote.optional() }),
    result: z.object({ acked: z.array(inboxItem), skipped: z.array(z.number()) }),
    callers: BOTH,
    reason: 'optional',
    reasonField: 'note',
    rest: [{ method: 'POST', path: '/inbox/ack', status: { 200: '`{acked, skipped}`' } }],
  }),
  'inbox.snooze': op<InboxItem>()({
    summary: 'Hide an item until a time; it opens again then.',
    input: inboxSnoozeInput.extend({ id: inboxId }),
    result: inboxItem,
    callers: BOTH,
    reason: 'optional',
    reasonField: 'note',
    rest: [{ method: 'POST', path: '/inbox/:id/snooze', status: { 200: '`{item}`' }, response: itemReply }],
  }),
  'budgets.get': op<BudgetsView>()({
    summary: 'Daily spend caps with today’s spend against each, the day, its zone and when the caps reset (midnight there).',
    input: empty,
    result: budgetsView,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/job-settings/budgets', status: { 200: '`{budgets}`' }, response: budgetsReply }],
  }),
  /** Daily spend caps: a field left out keeps its cap, `null` removes it. */
  'budgets.put': op<BudgetsView>()({
    summary: 'Set daily spend caps: `globalDailyUsd`, `perRoleDailyUsd: {role: usd}` (merged; `null` removes a cap), `timezone` of the day.',
    input: budgetsInput.extend({ reason: reason.optional() }),
    result: budgetsView,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'PUT', path: '/job-settings/budgets', status: { 200: '`{budgets}`' }, response: budgetsReply }],
  }),
  'roles.pauses': op<RolePause[]>()({
    summary: 'The roles paused now (who, when, why, until when).',
    input: empty,
    result: z.array(rolePause),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/role-pauses', status: { 200: '`{items: [{role, at, by, reason, until}], next: null}`' }, response: z.object({ items: z.array(rolePause), next: z.null() }) }],
  }),
  /** Pauses a whole role: its jobs start nothing new and its tasks are not handed out (optionally until a time, at most MAX_PAUSE_DAYS ahead). */
  'roles.pause': op<RolePause>()({
    summary: 'Pause a whole role: its jobs start nothing new and `claim` hands out none of its tasks, until resumed or until `until`.',
    input: z.strictObject({ role: roleName, reason, until: pauseUntil }),
    result: rolePause,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'POST', path: '/roles/:role/pause', status: { 200: '`{pause}`' }, response: pauseReply }],
  }),
  'roles.resume': op<RolePause>()({
    summary: 'Resume a paused role (jobs with a pause of their own stay paused).',
    input: z.strictObject({ role: roleName, reason: reason.optional() }),
    result: rolePause,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/roles/:role/resume', status: { 200: '`{pause}` (the pause that ended)' }, response: pauseReply }],
  }),
  'notifications.get': op<NotificationSettingsView>()({
    summary: 'Webhooks (URLs masked) and desktop notification settings.',
    input: empty,
    result: notificationSettingsView,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/notifications', status: { 200: '`{webhooks, desktop, consoleUrl, consoleUrlSet}` (URLs and secrets masked)' } }],
  }),
  /** Replaces webhooks and desktop settings; a webhook kept by `id` without `url` keeps its stored URL. */
  'notifications.put': op<NotificationSettingsView>()({
    summary:
      'Replace webhooks, desktop settings and the console link; a webhook kept by `id` without `url` keeps its stored URL. A new webhook gets a signing secret, shown whole in this reply only; without `events` it sends every critical and warning kind.',
    input: notificationsInput.extend({ reason: reason.optional() }),
    result: notificationSettingsView,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'PUT', path: '/notifications', status: { 200: '`{webhooks, desktop, consoleUrl, consoleUrlSet}` (URLs masked; new webhooks with their whole `secret`)' } }],
  }),
  /** Sends a test notice now to one webhook, or to each. */
  'notifications.test': op<WebhookTestResult[]>()({
    summary: 'Send a test notice now to one webhook (or to each) and report what came back.',
    input: z.strictObject({ webhookId: webhookId.optional() }),
    result: z.array(webhookTestResult),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'POST', path: '/notifications/test', status: { 200: '`{results: [{webhookId, url, ok, status, error, ms}]}`' }, response: z.object({ results: z.array(webhookTestResult) }) }],
  }),
  'notifications.deliveries': op<Page<Delivery>>()({
    summary: 'Webhook deliveries, newest first: pending (with the next attempt), delivered, or dead (gave up).',
    input: deliveriesListInput,
    result: page(delivery),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/notifications/deliveries', status: { 200: '`{items, next}`' } }],
  }),
  'notifications.retryDelivery': op<Delivery>()({
    summary: 'Send a dead delivery again, with a fresh set of retries.',
    input: z.strictObject({ id: z.number().int().positive() }),
    result: delivery,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'POST', path: '/notifications/deliveries/:id/retry', status: { 200: '`{delivery}`' }, response: z.object({ delivery }) }],
  }),
  /** A new signing secret for one webhook, shown this once. */
  'notifications.rotateSecret': op<WebhookSecret>()({
    summary: 'Make a new signing secret for one webhook; the reply shows it this once (deliveries from now on are signed with it).',
    input: z.strictObject({ webhookId, reason: reason.optional() }),
    result: webhookSecret,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/notifications/webhooks/:id/rotate', status: { 200: '`{webhookId, secret}`' } }],
  }),
} as const;
