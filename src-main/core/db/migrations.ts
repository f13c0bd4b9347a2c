/**
 * Numbered migrations. Never edit a shipped migration: append a new one.
 * Times are epoch milliseconds (INTEGER); JSON columns hold text.
 */
export interface Migration {
  name: string;
  sql: string;
}

export const MIGRATIONS: Migration[] = [
  {
    name: '001_tasks_locks_instances',
    sql: `
      CREATE TABLE tasks (
        id INTEGER PRIMARY KEY,
        title TEXT NOT NULL,
        role TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('backlog','in_progress','blocked','done','failed','cancelled')),
        priority INTEGER NOT NULL DEFAULT 0,
        payload TEXT NOT NULL DEFAULT 'null',
        depends_on TEXT NOT NULL DEFAULT '[]',
        unmet_deps INTEGER NOT NULL DEFAULT 0,
        attempt INTEGER NOT NULL DEFAULT 0,
        previously_expired INTEGER NOT NULL DEFAULT 0,
        fence INTEGER NOT NULL DEFAULT 0,
        last_holder TEXT,
        note TEXT,
        output TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      );
      -- P3 + candidate order: the claim query walks this partial index, never the table.
      CREATE INDEX tasks_claimable ON tasks (role, priority DESC, id) WHERE status = 'backlog' AND unmet_deps = 0;
      CREATE INDEX tasks_role_status ON tasks (role, status);
      CREATE INDEX tasks_status_updated ON tasks (status, updated_at);

      CREATE TABLE task_deps (
        task_id INTEGER NOT NULL REFERENCES tasks(id),
        depends_on INTEGER NOT NULL REFERENCES tasks(id),
        PRIMARY KEY (task_id, depends_on)
      ) WITHOUT ROWID;
      CREATE INDEX task_deps_reverse ON task_deps (depends_on, task_id);

      -- P1: the lock row is the assignment. One row per task, enforced by the primary key.
      CREATE TABLE locks (
        task_id INTEGER PRIMARY KEY REFERENCES tasks(id),
        instance_id TEXT NOT NULL,
        fence INTEGER NOT NULL,
        claimed_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX locks_expiry ON locks (expires_at);
      CREATE INDEX locks_instance ON locks (instance_id);

      -- One row per expired lock, for the operator's expired-lock cards ("re-claimed by whom").
      CREATE TABLE lock_expiries (
        id INTEGER PRIMARY KEY,
        task_id INTEGER NOT NULL REFERENCES tasks(id),
        instance_id TEXT NOT NULL,
        fence INTEGER NOT NULL,
        reason TEXT NOT NULL,
        expired_at INTEGER NOT NULL,
        reclaimed_by TEXT,
        reclaimed_at INTEGER
      );
      CREATE INDEX lock_expiries_at ON lock_expiries (expired_at);
      CREATE INDEX lock_expiries_task ON lock_expiries (task_id, id);

      CREATE TABLE instances (
        id TEXT PRIMARY KEY,
        role TEXT NOT NULL,
        name TEXT NOT NULL,
        version TEXT,
        status TEXT NOT NULL CHECK (status IN ('online','disconnected','offline')),
        token_id TEXT,
        connected_at INTEGER NOT NULL,
        last_heartbeat_at INTEGER NOT NULL,
        disconnected_at INTEGER
      );
      CREATE INDEX instances_status ON instances (status, last_heartbeat_at);
      CREATE INDEX instances_role ON instances (role, status);

      CREATE TABLE idempotency (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        body_hash TEXT NOT NULL,
        result TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotency_age ON idempotency (created_at);

      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
      );
    `,
  },
  {
    name: '002_audit_log',
    sql: `
      CREATE TABLE audit (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT NOT NULL,
        detail TEXT NOT NULL,
        trace_id TEXT,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      CREATE INDEX audit_type ON audit (type, id);
      CREATE INDEX audit_subject ON audit (subject, id);
      CREATE INDEX audit_actor ON audit (actor, id);
      CREATE INDEX audit_at ON audit (at);
      -- Append-only, enforced by the database itself.
      CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
      CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
        BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END;
    `,
  },
  {
    name: '003_tokens',
    sql: `
      CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        role TEXT,
        kind TEXT NOT NULL CHECK (kind IN ('agent','operator')),
        hash TEXT NOT NULL UNIQUE,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      );
    `,
  },
];
