/** The `webhook_deliveries` table (the webhook queue). SQL only, no rules: `webhooks.ts` and `settings.ts` hold them. */
import type { DeliveryStatus, InboxItem, InboxKind } from '../../common/attention';
import type { Db } from '../db/open';
import type { Where } from '../db/where';

export interface DeliveryRow {
  id: number;
  webhook_id: string;
  item_id: number | null;
  kind: string;
  status: DeliveryStatus;
  attempts: number;
  next_at: number | null;
  last_error: string | null;
  last_status: number | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  /** The item's title (list only). */
  item_title?: string | null;
}

/** A page of deliveries matching `where`, newest first, with their item's title (built per call, as before). */
export function deliveryRows(db: Db, where: Where, limit: number): DeliveryRow[] {
  return db
    .prepare<unknown[], DeliveryRow>(`SELECT d.*, i.title AS item_title FROM webhook_deliveries d LEFT JOIN inbox_items i ON i.id = d.item_id ${where.sql()} ORDER BY d.id DESC LIMIT ?`)
    .all(...where.params, limit);
}

/** The queue's statements, prepared once when the webhook sender is built. */
export function prepareDeliveryStatements(db: Db) {
  return {
    insert: db.prepare(`INSERT INTO webhook_deliveries (webhook_id, item_id, kind, status, attempts, next_at, created_at, updated_at) VALUES (?, ?, ?, 'pending', 0, ?, ?, ?)`),
    get: db.prepare<[number], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?'),
    due: db.prepare<[number, number], DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE status = 'pending' AND next_at <= ? ORDER BY next_at, id LIMIT ?`),
    nextDue: db.prepare<[number], { id: number; next_at: number }>(`SELECT id, next_at FROM webhook_deliveries WHERE status = 'pending' ORDER BY next_at, id LIMIT ?`),
    update: db.prepare(
      'UPDATE webhook_deliveries SET status = @status, attempts = @attempts, next_at = @next_at, last_error = @last_error, last_status = @last_status, updated_at = @now, delivered_at = @delivered_at WHERE id = @id',
    ),
    item: db.prepare<[number], { kind: InboxKind; severity: InboxItem['severity']; subject: string; title: string; detail: string; first_at: number; last_at: number; count: number; state: InboxItem['state'] }>(
      'SELECT kind, severity, subject, title, detail, first_at, last_at, count, state FROM inbox_items WHERE id = ?',
    ),
  };
}

/** A webhook's last delivery (the settings view shows it), prepared once. */
export function prepareLastDelivery(db: Db) {
  return {
    lastDelivery: db.prepare<[string], { status: 'pending' | 'delivered' | 'dead'; updated_at: number; last_error: string | null }>(
      'SELECT status, updated_at, last_error FROM webhook_deliveries WHERE webhook_id = ? ORDER BY id DESC LIMIT 1',
    ),
  };
}
