/** The `tokens` table (agent tokens, stored as hashes). SQL only, no rules: `tokens.ts` holds them. */
import type { Db } from '../db/open';

export interface TokenRow {
  id: string;
  name: string;
  role: string | null;
  kind: string;
  hash: string;
  created_at: number;
  revoked_at: number | null;
}

/** Prepared once, when the token service is built. */
export function prepareTokenStatements(db: Db) {
  return {
    byHash: db.prepare<[string], TokenRow>(`SELECT * FROM tokens WHERE hash = ? AND kind = 'agent'`),
    byId: db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE id = ?'),
    all: db.prepare<[], TokenRow>(`SELECT * FROM tokens WHERE kind = 'agent' ORDER BY created_at DESC`),
    insert: db.prepare(`INSERT INTO tokens (id, name, role, kind, hash, created_at) VALUES (?, ?, ?, 'agent', ?, ?)`),
    revoke: db.prepare('UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
  };
}
