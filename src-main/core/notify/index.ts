/**
 * Notifications (PROTOCOL §12): the operator's webhook and desktop settings, and signed webhook
 * delivery with retries. The inbox module builds these; nothing else reaches into their files.
 */
export { NotificationSettings, DEFAULT_CONSOLE_URL, DEFAULT_NOTIFICATIONS, itemLink, maskSecret, type StoredNotifications, type StoredWebhook } from './settings';
export { Webhooks, BACKOFF_S, MAX_ATTEMPTS, type PostResult, type WebhookOptions } from './webhooks';
export { maskUrl, signatureHeader, webhookRequest, type Notice, type WebhookRequest } from './webhook-format';
