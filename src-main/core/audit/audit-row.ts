/** A row of the `audit` table as SQLite returns it (its own file: the chain checks and the store both read it). */
export interface AuditRow {
  id: number;
  at: number;
  type: string;
  actor: string;
  subject: string;
  detail: string;
  trace_id: string | null;
  prev_hash: string;
  hash: string;
}
