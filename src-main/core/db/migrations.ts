/**
 * Numbered migrations. Never edit a shipped migration: append a new one.
 * Times are epoch milliseconds (INTEGER); JSON columns hold text.
 */
import type Database from 'better-sqlite3';

export interface Migration {
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: for a change that depends on what the file holds. */
  run?: (db: Database.Database) => void;
  /**
   * The step rebuilds a table other tables point at (SQLite's documented way to change a CHECK):
   * foreign keys are off around its transaction and `foreign_key_check` must find nothing before
   * it commits (open.ts `migrate`).
   */
  rebuildsReferencedTable?: true;
}

/** Adds each column `table` lacks (a migration that may run on a file that already has some). */
function addMissingColumns(db: Database.Database, table: string, columns: Array<[column: string, decl: string]>): void {
  const have = new Set(db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all().map((c) => c.name));
  for (const [column, decl] of columns) if (!have.has(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${decl}`);
}

/**
 * For a table rebuild: adds to `to` each column of `from` it lacks (same type, NOT NULL and
 * default), and returns the list of `from`'s columns, all of which `to` now has, for the copy.
 */
function carryOverColumns(db: Database.Database, from: string, to: string): string {
  type Column = { name: string; type: string; notnull: number; dflt_value: string | null };
  const columns = db.prepare<[], Column>(`PRAGMA table_info(${from})`).all();
  addMissingColumns(
    db,
    to,
    columns.map((c) => [c.name, `${c.type}${c.notnull ? ' NOT NULL' : ''}${c.dflt_value !== null ? ` DEFAULT ${c.dflt_value}` : ''}`]),
  );
  return columns.map((c) => `"${c.name}"`).join(', ');
}

/** Migration 027's trigger bodies: a usage row added to / taken from its attempt's and its quarter hour's totals. */
const ADD_NEW_USAGE_ROW = `
        INSERT INTO usage_attempts (subject, attempt, input_tokens, output_tokens, cost_nusd, cache_read_tokens, cache_write_tokens, reports)
          VALUES (NEW.subject, NEW.attempt, NEW.input_tokens, NEW.output_tokens, NEW.cost_nusd, NEW.cache_read_tokens, NEW.cache_write_tokens, 1)
          ON CONFLICT (subject, attempt) DO UPDATE SET
            input_tokens = input_tokens + excluded.input_tokens,
            output_tokens = output_tokens + excluded.output_tokens,
            cost_nusd = cost_nusd + excluded.cost_nusd,
            cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
            cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
            reports = reports + 1;
        INSERT INTO usage_quarters (quarter, role, cost_nusd, tokens, reports)
          VALUES (NEW.at / 900000, NEW.role, NEW.cost_nusd, NEW.input_tokens + NEW.output_tokens, 1)
          ON CONFLICT (quarter, role) DO UPDATE SET
            cost_nusd = cost_nusd + excluded.cost_nusd,
            tokens = tokens + excluded.tokens,
            reports = reports + 1;`;
const REMOVE_OLD_USAGE_ROW = `
        UPDATE usage_attempts SET
            input_tokens = input_tokens - OLD.input_tokens,
            output_tokens = output_tokens - OLD.output_tokens,
            cost_nusd = cost_nusd - OLD.cost_nusd,
            cache_read_tokens = cache_read_tokens - OLD.cache_read_tokens,
            cache_write_tokens = cache_write_tokens - OLD.cache_write_tokens,
            reports = reports - 1
          WHERE subject = OLD.subject AND attempt = OLD.attempt;
        DELETE FROM usage_attempts WHERE subject = OLD.subject AND attempt = OLD.attempt AND reports <= 0;
        UPDATE usage_quarters SET
            cost_nusd = cost_nusd - OLD.cost_nusd,
            tokens = tokens - (OLD.input_tokens + OLD.output_tokens),
            reports = reports - 1
          WHERE quarter = OLD.at / 900000 AND role = OLD.role;
        DELETE FROM usage_quarters WHERE quarter = OLD.at / 900000 AND role = OLD.role AND reports <= 0;`;

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
        trace_id TEXT, -- one trace per task: every audit row about it (create, claims, releases, expiries) carries it
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
      -- No secondary indexes: the table only holds live locks (a few hundred at most), so scans
      -- are cheap, and every index would add page writes to each claim and report.

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
        id INTEGER PRIMARY KEY, -- dense, assigned by AuditLog.append; rows are never deleted
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        actor TEXT NOT NULL,
        subject TEXT NOT NULL,
        detail TEXT NOT NULL,
        trace_id TEXT,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL
      );
      -- The three high-volume lock types make up most rows; filtering by them walks the primary key
      -- and finds matches at once, so the type index leaves them out (fewer page writes per claim).
      CREATE INDEX audit_type ON audit (type, id) WHERE type NOT IN ('lock.claim', 'lock.release', 'lock.renew');
      CREATE INDEX audit_subject ON audit (subject, id);
      -- Lock claims, renewals and releases are only ever made by instances (actor = instance id), and
      -- with many agents each one's rows would land in a different leaf page of an (actor, id)
      -- index on every group commit. So the actor index leaves them out too: an instance's lock
      -- events are found by walking the primary key (they are dense), everyone else's by the index.
      CREATE INDEX audit_actor ON audit (actor, id) WHERE type NOT IN ('lock.claim', 'lock.release', 'lock.renew');
      -- No index on \`at\`: AuditLog keeps \`at\` non-decreasing in id order, so a time range maps to
      -- an id range by binary search over the primary key (one index fewer on every append).
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
  {
    name: '004_signals',
    sql: `
      -- Readiness flags for a business key (SPEC §5): set through the API, read by job preconditions.
      CREATE TABLE signals (
        name TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT,
        actor TEXT NOT NULL,
        set_at INTEGER NOT NULL,
        PRIMARY KEY (name, key)
      ) WITHOUT ROWID;
      CREATE INDEX signals_key ON signals (key, name);
    `,
  },
  {
    name: '005_jobs',
    sql: `
      -- Central jobs (SPEC §3, §5, §6). A job row is the static record that fires forever.
      CREATE TABLE jobs (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        spec TEXT NOT NULL, -- normalised JobSpec JSON
        version INTEGER NOT NULL,
        enabled INTEGER NOT NULL,
        paused_at INTEGER,
        paused_by TEXT,
        paused_reason TEXT,
        cursor INTEGER NOT NULL, -- every slot due before this instant has been looked at
        next_check_at INTEGER, -- when the runner looks at the next slot (NULL: none within the horizon)
        created_at INTEGER NOT NULL,
        created_by TEXT NOT NULL,
        updated_at INTEGER NOT NULL,
        updated_by TEXT NOT NULL
      );
      CREATE INDEX jobs_due ON jobs (next_check_at) WHERE enabled = 1;
      CREATE INDEX jobs_role ON jobs (role, name);

      -- Every version of every job (quality drift: a run names the version it ran with).
      CREATE TABLE job_versions (
        job_id TEXT NOT NULL REFERENCES jobs(id),
        version INTEGER NOT NULL,
        spec TEXT NOT NULL,
        at INTEGER NOT NULL,
        actor TEXT NOT NULL,
        reason TEXT,
        PRIMARY KEY (job_id, version)
      ) WITHOUT ROWID;

      -- The source's task_run_record: one row per (job, slot), inserted before anything is dispatched.
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES jobs(id),
        job_name TEXT NOT NULL,
        slot TEXT NOT NULL,
        slot_at INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','running','success','failed','skipped')),
        disposition TEXT NOT NULL,
        trigger TEXT NOT NULL CHECK (trigger IN ('schedule','catch_up','manual')),
        attempt INTEGER NOT NULL DEFAULT 0,
        retry_count INTEGER NOT NULL DEFAULT 0,
        max_retry INTEGER NOT NULL,
        next_attempt_at INTEGER,
        opens_at INTEGER NOT NULL,
        window_closes_at INTEGER,
        deadline INTEGER,
        instance_id TEXT,
        dispatched_at INTEGER,
        version INTEGER NOT NULL,
        trace_id TEXT NOT NULL,
        idempotency_key TEXT NOT NULL,
        covers TEXT NOT NULL DEFAULT '[]',
        covered_by TEXT,
        last_error TEXT,
        error_class TEXT,
        held INTEGER NOT NULL DEFAULT 0,
        output TEXT,
        created_at INTEGER NOT NULL,
        triggered_at INTEGER,
        started_at INTEGER,
        finished_at INTEGER,
        updated_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX runs_job_slot ON runs (job_id, slot);
      CREATE INDEX runs_due ON runs (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
      CREATE INDEX runs_job_at ON runs (job_id, slot_at);
      CREATE INDEX runs_at ON runs (slot_at, id);
      CREATE INDEX runs_open ON runs (job_id, status) WHERE status IN ('pending','running');
      CREATE INDEX runs_folded ON runs (job_id, slot_at) WHERE disposition = 'folded';

      -- Step checkpoints (SPEC §6 partial success): a step whose side effect is done.
      CREATE TABLE run_steps (
        id INTEGER PRIMARY KEY,
        run_id TEXT NOT NULL REFERENCES runs(id),
        step TEXT NOT NULL,
        ref TEXT,
        attempt INTEGER NOT NULL,
        instance_id TEXT NOT NULL,
        at INTEGER NOT NULL,
        UNIQUE (run_id, step)
      );

      -- The last verdict of each check for each (job, slot): the "why didn't it run" evidence.
      CREATE TABLE checks (
        job_id TEXT NOT NULL,
        slot TEXT NOT NULL,
        name TEXT NOT NULL,
        layer TEXT NOT NULL CHECK (layer IN ('time','precondition','execution')),
        verdict TEXT NOT NULL CHECK (verdict IN ('ready','not_ready','error')),
        reason TEXT NOT NULL,
        evidence TEXT NOT NULL,
        at INTEGER NOT NULL,
        first_at INTEGER NOT NULL,
        count INTEGER NOT NULL,
        changed_at INTEGER NOT NULL,
        PRIMARY KEY (job_id, slot, name)
      ) WITHOUT ROWID;

      -- Missed and failed slots the operator (or the next window) can run again.
      CREATE TABLE backfills (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES jobs(id),
        slot TEXT NOT NULL,
        slot_at INTEGER NOT NULL,
        run_id TEXT NOT NULL REFERENCES runs(id),
        reason TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued','held','dispatched','done','failed','cancelled')),
        attempts INTEGER NOT NULL DEFAULT 0,
        instance_id TEXT,
        started_at INTEGER,
        deadline INTEGER,
        tick_run_id TEXT,
        last_error TEXT,
        error_class TEXT,
        version INTEGER,
        note TEXT,
        actor TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        dispatched_at INTEGER,
        finished_at INTEGER
      );
      CREATE UNIQUE INDEX backfills_open ON backfills (run_id) WHERE status IN ('queued','held','dispatched');
      CREATE INDEX backfills_job ON backfills (job_id, status, slot_at);
      CREATE INDEX backfills_deadline ON backfills (deadline) WHERE status = 'dispatched';

      CREATE TABLE calendars (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        timezone TEXT NOT NULL,
        workdays TEXT NOT NULL,
        holidays TEXT NOT NULL,
        extra_workdays TEXT NOT NULL,
        version INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        updated_by TEXT NOT NULL
      );
    `,
  },
  {
    name: '006_jobs_indexes',
    sql: `
      -- The run a folded slot is covered by (read on every success), and runs by instance (instance loss).
      CREATE INDEX IF NOT EXISTS runs_covered_by ON runs (covered_by) WHERE covered_by IS NOT NULL;
      CREATE INDEX IF NOT EXISTS runs_instance ON runs (instance_id) WHERE status = 'running';
    `,
  },
  {
    name: '007_audit_subjects_in_bulk',
    sql: `
      -- An (subject, id) index on audit cost one WAL page in every claim's and every report's
      -- commit. The subject index is now a table AuditLog fills in bulk, SUBJECT_INDEX_LAG rows at
      -- a time, inside the write that reaches the threshold (a few pages per thousand rows).
      -- Queries read it for ids <= indexed_to and scan the short unindexed tail for the rest.
      CREATE TABLE audit_subjects (
        subject TEXT NOT NULL,
        id INTEGER NOT NULL,
        PRIMARY KEY (subject, id)
      ) WITHOUT ROWID;
      CREATE TABLE audit_subjects_progress (
        only INTEGER PRIMARY KEY CHECK (only = 1),
        indexed_to INTEGER NOT NULL
      );
      INSERT INTO audit_subjects (subject, id) SELECT subject, id FROM audit;
      INSERT INTO audit_subjects_progress (only, indexed_to) VALUES (1, (SELECT coalesce(max(id), 0) FROM audit));
      DROP INDEX audit_subject;
      CREATE TRIGGER audit_subjects_no_update BEFORE UPDATE ON audit_subjects
        BEGIN SELECT RAISE(ABORT, 'the audit subject index is append-only'); END;
      CREATE TRIGGER audit_subjects_no_delete BEFORE DELETE ON audit_subjects
        BEGIN SELECT RAISE(ABORT, 'the audit subject index is append-only'); END;
    `,
  },
  {
    name: '008_tasks_claim_reserve',
    sql: `
      -- A task row grows at its first claim (status 'backlog' -> 'in_progress' and last_holder
      -- NULL -> an instance id: 21 bytes), and rows are appended to full pages, so that growth split
      -- a tasks page on many first claims (measured: 1.33 tasks pages written per claim). SQLite has
      -- no fillfactor, so a new row reserves the room itself: claim_reserve holds CLAIM_RESERVE_BYTES
      -- until the first claim sets it to NULL (task-repo.ts).
      ALTER TABLE tasks ADD COLUMN claim_reserve BLOB;
    `,
  },
  {
    name: '009_tasks_trace_id_backfill',
    // tasks.trace_id was added to migration 001 after 001 had shipped (a mistake: see the header), so
    // a database created before that has no such column. Add it there; elsewhere nothing changes.
    sql: '',
    run: (db) => {
      const columns = db.prepare<[], { name: string }>('PRAGMA table_info(tasks)').all();
      if (!columns.some((c) => c.name === 'trace_id')) db.exec('ALTER TABLE tasks ADD COLUMN trace_id TEXT');
    },
  },
  {
    name: '010_usage',
    sql: `
      -- What attempts spent (PROTOCOL §5 usage frames): one row per report, summed on read. Not in
      -- the audit chain. Cost in nano-dollars so sums stay exact; the log lines live elsewhere
      -- (logs/seg-*.db), since their volume must never weigh on this database's commits.
      CREATE TABLE usage (
        id INTEGER PRIMARY KEY,
        subject TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        role TEXT NOT NULL,
        job_id TEXT,
        model TEXT,
        instance_id TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_nusd INTEGER NOT NULL,
        at INTEGER NOT NULL
      );
      CREATE INDEX usage_subject ON usage (subject, attempt);
      CREATE INDEX usage_at ON usage (at);
    `,
  },
  {
    name: '011_managed_agents',
    sql: `
      -- Agent processes Gaffer starts and keeps running (PROTOCOL §7). JSON columns: command (argv), env.
      CREATE TABLE managed_agents (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL,
        command TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('per_task','long_running')),
        instances INTEGER NOT NULL CHECK (instances >= 1),
        cwd TEXT,
        env TEXT NOT NULL DEFAULT '{}',
        timeout_s INTEGER,
        shell INTEGER NOT NULL DEFAULT 0,
        parse TEXT,
        desired TEXT NOT NULL CHECK (desired IN ('running','stopped')),
        token_id TEXT,
        version INTEGER NOT NULL DEFAULT 1,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        updated_by TEXT NOT NULL
      );
      -- Every process group Gaffer started and has not yet seen end. A Gaffer killed with -9 leaves
      -- rows behind; the next start ends those groups, once it has verified they are still ours
      -- (the leader's start time and the marker in its environment), then deletes the rows.
      CREATE TABLE managed_processes (
        pgid INTEGER PRIMARY KEY,
        managed_id TEXT NOT NULL,
        instance INTEGER NOT NULL,
        marker TEXT NOT NULL,
        start_ticks TEXT,
        started_at INTEGER NOT NULL
      );
    `,
  },
  {
    name: '012_runs_waiting_on',
    sql: `
      -- What a run's next attempt (or offer) waits for, as a column the engine decides by: before, it
      -- parsed the last execution check's evidence back (checks are the operator's explanation). And
      -- whether a run by hand skips its preconditions (before: "a 'manual' check row exists").
      ALTER TABLE runs ADD COLUMN waiting_on TEXT;
      ALTER TABLE runs ADD COLUMN overrides_preconditions INTEGER NOT NULL DEFAULT 0;
      -- Open runs of an existing database: the same facts, read once from their checks.
      UPDATE runs SET waiting_on = CASE
          WHEN EXISTS (SELECT 1 FROM checks c WHERE c.job_id = runs.job_id AND c.slot = runs.slot
                       AND c.layer = 'precondition' AND c.verdict <> 'ready') THEN 'preconditions'
          ELSE (SELECT json_extract(c.evidence, '$.blocker') FROM checks c
                WHERE c.job_id = runs.job_id AND c.slot = runs.slot AND c.name = 'execution' AND c.verdict = 'not_ready')
        END
        WHERE status IN ('pending', 'running') AND instance_id IS NULL;
      UPDATE runs SET overrides_preconditions = 1
        WHERE trigger = 'manual' AND EXISTS (SELECT 1 FROM checks c WHERE c.job_id = runs.job_id AND c.slot = runs.slot AND c.name = 'manual');
    `,
  },
  {
    name: '013_attention_inbox_webhooks_approvals_pauses',
    // Written so that running it on a database that already has it changes nothing (a test
    // rewinding user_version, a copy restored next to a newer file): IF NOT EXISTS, and columns
    // added only where missing.
    sql: `
      -- Everything that needs the operator (PROTOCOL §8), with a lifecycle: open -> acked, or
      -- snoozed until a time and open again. An open item absorbs later occurrences of the same
      -- kind and subject (count), so a long sleep raises one item per job, not one per slot.
      CREATE TABLE IF NOT EXISTS inbox_items (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        severity TEXT NOT NULL CHECK (severity IN ('critical','warning','info')),
        subject TEXT NOT NULL,
        title TEXT NOT NULL,
        detail TEXT NOT NULL,
        evidence TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('open','snoozed','acked')),
        count INTEGER NOT NULL,
        first_at INTEGER NOT NULL,
        last_at INTEGER NOT NULL,
        snoozed_until INTEGER,
        acked_at INTEGER,
        acked_by TEXT,
        note TEXT,
        updated_at INTEGER NOT NULL
      );
      CREATE INDEX IF NOT EXISTS inbox_by_state ON inbox_items (state, last_at, id);
      -- The live item a later occurrence folds into (at most one per kind and subject).
      CREATE UNIQUE INDEX IF NOT EXISTS inbox_live ON inbox_items (kind, subject) WHERE state IN ('open','snoozed');
      CREATE INDEX IF NOT EXISTS inbox_snoozed ON inbox_items (snoozed_until) WHERE state = 'snoozed';
      -- One row per occurrence ever raised: raising the same occurrence twice is a no-op (a
      -- restart's reconcile, an event seen again), which makes "exactly once per occurrence" a key.
      CREATE TABLE IF NOT EXISTS inbox_occurrences (
        key TEXT PRIMARY KEY,
        item_id INTEGER NOT NULL REFERENCES inbox_items(id),
        at INTEGER NOT NULL
      ) WITHOUT ROWID;
      -- The dead-man's switch: every slot of the job due before checked_to has been looked at.
      CREATE TABLE IF NOT EXISTS inbox_watch (
        job_id TEXT PRIMARY KEY,
        checked_to INTEGER NOT NULL
      ) WITHOUT ROWID;

      -- Outbound webhook deliveries: a durable outbox written in the transaction that raised the
      -- item, sent after the commit, retried with backoff, 'dead' when it gives up.
      CREATE TABLE IF NOT EXISTS webhook_deliveries (
        id INTEGER PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        item_id INTEGER REFERENCES inbox_items(id),
        kind TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending','delivered','dead')),
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER,
        last_error TEXT,
        last_status INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        delivered_at INTEGER
      );
      CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_at) WHERE status = 'pending';
      CREATE INDEX IF NOT EXISTS webhook_deliveries_hook ON webhook_deliveries (webhook_id, id);

      -- Approvals: the operator's decision on a held run travels with the backfill that runs it
      -- again (JSON {decision, note, by, at}), so every re-offer of that dispatch carries it.
      -- Pauses people ask for: until a time (auto-resume), finishing running work first (drain),
      -- and a whole role (its jobs carry pause_scope 'role'; its tasks are not handed out).
      CREATE TABLE IF NOT EXISTS role_pauses (
        role TEXT PRIMARY KEY,
        at INTEGER NOT NULL,
        by TEXT NOT NULL,
        reason TEXT NOT NULL,
        until INTEGER
      ) WITHOUT ROWID;
    `,
    run: (db) => {
      const added: Array<[table: string, column: string, decl: string]> = [
        ['backfills', 'approval', 'TEXT'],
        ['jobs', 'paused_until', 'INTEGER'],
        ['jobs', 'pause_drain', 'INTEGER NOT NULL DEFAULT 0'],
        ['jobs', 'pause_scope', 'TEXT'],
      ];
      for (const [table, column, decl] of added) {
        const columns = db.prepare<[], { name: string }>(`PRAGMA table_info(${table})`).all();
        if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${decl}`);
      }
    },
  },
  {
    name: '014_task_budgets',
    sql: `
      -- A task's spend cap per attempt (optional at create; most tasks have none, so a table of its
      -- own keeps the task rows and the claim path as they are). stopped_attempt: the attempt the
      -- cap took away (the task is blocked for the operator; the inbox item is a budget one).
      CREATE TABLE IF NOT EXISTS task_budgets (
        task_id INTEGER PRIMARY KEY REFERENCES tasks(id),
        max_cost_usd REAL,
        max_tokens INTEGER,
        stopped_attempt INTEGER
      );
    `,
  },
  {
    name: '015_run_offers',
    // The offer of a run's attempt, owned by the jobs engine (before: in the hub's memory). While
    // an attempt is out and nobody has acknowledged it, offer_to is the one instance it is offered
    // to (NULL: it waits for an instance to say hello), offered_at and ack_due_at say when it was
    // offered and when its run_started is due, offered lists every instance this attempt was
    // offered to (each at most once). A backfill's attempt is offered through its run's row.
    // Like 013, running it on a database that already has it changes nothing.
    sql: '',
    run: (db) => {
      addMissingColumns(db, 'runs', [
        ['offer_to', 'TEXT'],
        ['offered_at', 'INTEGER'],
        ['ack_due_at', 'INTEGER'],
        ['offered', "TEXT NOT NULL DEFAULT '[]'"],
      ]);
      // Offers out to an instance: its load when the next one is picked, and what moves on when it leaves.
      db.exec('CREATE INDEX IF NOT EXISTS runs_offer_to ON runs (offer_to) WHERE offer_to IS NOT NULL');
    },
  },
  {
    name: '016_checks_by_rowid',
    // Checks were a WITHOUT ROWID table keyed (job_id, slot, name) holding the evidence inline: rows
    // of ~600 bytes, three to a page, so every slot's first checks split a page somewhere in the
    // tree — half the WAL pages of a burst of triggers. Rows now go to the end of a rowid table
    // (checks of one pass share pages) and the key is a small unique index beside it.
    sql: `
      ALTER TABLE checks RENAME TO checks_without_rowid;
      CREATE TABLE checks (
        id INTEGER PRIMARY KEY,
        job_id TEXT NOT NULL,
        slot TEXT NOT NULL,
        name TEXT NOT NULL,
        layer TEXT NOT NULL CHECK (layer IN ('time','precondition','execution')),
        verdict TEXT NOT NULL CHECK (verdict IN ('ready','not_ready','error')),
        reason TEXT NOT NULL,
        evidence TEXT NOT NULL,
        at INTEGER NOT NULL,
        first_at INTEGER NOT NULL,
        count INTEGER NOT NULL,
        changed_at INTEGER NOT NULL
      );
      INSERT INTO checks (job_id, slot, name, layer, verdict, reason, evidence, at, first_at, count, changed_at)
        SELECT job_id, slot, name, layer, verdict, reason, evidence, at, first_at, count, changed_at FROM checks_without_rowid ORDER BY first_at, job_id, slot, name;
      DROP TABLE checks_without_rowid;
      CREATE UNIQUE INDEX checks_key ON checks (job_id, slot, name);
    `,
  },
  {
    name: '017_idempotency_per_caller',
    // Task idempotency keys were one set for everyone (scope 'task.create'); they are now kept per
    // caller (PROTOCOL §17): 'task.create:token:<id>' for an agent token, 'task.create:operator'
    // for the operator (tasks/idempotency.ts, invariant 3). A stored key moves to its creator's
    // scope, told by the `task.create` audit row of the task it made: an `operator:*` actor is the
    // operator, an instance (`inst_…`) its token (or the token-less agents), any other actor
    // itself. A key whose creator cannot be told (no such row, an instance since forgotten) stays
    // in 'task.create', the legacy scope every caller still consults after its own until the key
    // expires with its window. The naming is copied, not imported: a migration keeps what it did.
    // Running it again changes nothing more (only keys still in the legacy scope are looked at).
    sql: '',
    run: (db) => {
      const keys = db.prepare<[], { key: string; result: string }>(`SELECT key, result FROM idempotency WHERE scope = 'task.create'`).all();
      if (keys.length === 0) return;
      const actorOf = db.prepare<[string], string>(`SELECT actor FROM audit WHERE subject = ? AND type = 'task.create' ORDER BY id LIMIT 1`).pluck();
      const instance = db.prepare<[string], { token_id: string | null }>('SELECT token_id FROM instances WHERE id = ?');
      const move = db.prepare<[string, string]>(`UPDATE idempotency SET scope = ? WHERE scope = 'task.create' AND key = ?`);
      for (const { key, result } of keys) {
        let taskId: unknown;
        try {
          taskId = (JSON.parse(result) as { taskId?: unknown }).taskId;
        } catch {
          continue;
        }
        const actor = Number.isSafeInteger(taskId) ? actorOf.get(`task:${taskId as number}`) : undefined;
        if (actor === undefined) continue;
        let caller: string;
        if (actor.startsWith('operator:')) caller = 'operator';
        else if (actor.startsWith('inst_')) {
          const row = instance.get(actor);
          if (!row) continue;
          caller = row.token_id ? `token:${row.token_id}` : 'agent';
        } else caller = `actor:${actor}`;
        move.run(`task.create:${caller}`, key);
      }
    },
  },
  {
    name: '018_run_ranges',
    // One run row may stand for a run of consecutive slots that got the same decision at once:
    // the older slots of a long gap (an every-second job slept through for a day has 86 400 of
    // them) cost one row, not one each. range_slots counts them, from the row's own slot to
    // range_last_slot (due range_last_at); NULL for an ordinary run. Like 013/015, running it on
    // a database that already has it changes nothing.
    sql: '',
    run: (db) => {
      addMissingColumns(db, 'runs', [
        ['range_slots', 'INTEGER'],
        ['range_last_slot', 'TEXT'],
        ['range_last_at', 'INTEGER'],
      ]);
      // "Which range covers instant T" (explain, the ledger, the runner's first look after a step back).
      db.exec('CREATE INDEX IF NOT EXISTS runs_ranges ON runs (job_id, range_last_at) WHERE range_slots IS NOT NULL');
    },
  },
  {
    name: '019_backfills_by_run',
    // A run's backfills, newest last: the latest is what a decision acts on, and the run lists'
    // `settled` filter looks it up for every failed run (core/jobs/run-settlement.ts) — without
    // this, each lookup scans the backfill queue's whole history. Idempotent on re-run.
    sql: 'CREATE INDEX IF NOT EXISTS backfills_run ON backfills (run_id, id);',
  },
  {
    name: '020_inbox_resolved',
    // An item whose cause is gone is `resolved` by Gaffer (PROTOCOL §12): a state of its own beside
    // `acked` (the operator's act), with when and why. The state's CHECK changes, so the table is
    // rebuilt; inbox_occurrences and webhook_deliveries point at it (foreign keys off meanwhile).
    // The new table takes the old one's name at the end (SQLite's twelve-step way): renaming the old
    // one first would rewrite the references in the tables that point at it.
    rebuildsReferencedTable: true,
    sql: '',
    run: (db) =>
      db.exec(`
      CREATE TABLE inbox_items_020 (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        severity TEXT NOT NULL CHECK (severity IN ('critical','warning','info')),
        subject TEXT NOT NULL,
        title TEXT NOT NULL,
        detail TEXT NOT NULL,
        evidence TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('open','snoozed','acked','resolved')),
        count INTEGER NOT NULL,
        first_at INTEGER NOT NULL,
        last_at INTEGER NOT NULL,
        snoozed_until INTEGER,
        acked_at INTEGER,
        acked_by TEXT,
        note TEXT,
        updated_at INTEGER NOT NULL,
        resolved_at INTEGER,
        resolution TEXT
      );
      INSERT INTO inbox_items_020 (id, kind, severity, subject, title, detail, evidence, state, count, first_at, last_at, snoozed_until, acked_at, acked_by, note, updated_at)
        SELECT id, kind, severity, subject, title, detail, evidence, state, count, first_at, last_at, snoozed_until, acked_at, acked_by, note, updated_at FROM inbox_items;
      DROP TABLE inbox_items;
      ALTER TABLE inbox_items_020 RENAME TO inbox_items;
      CREATE INDEX inbox_by_state ON inbox_items (state, last_at, id);
      CREATE UNIQUE INDEX inbox_live ON inbox_items (kind, subject) WHERE state IN ('open','snoozed');
      CREATE INDEX inbox_snoozed ON inbox_items (snoozed_until) WHERE state = 'snoozed';
    `),
  },
  {
    name: '022_artifacts',
    // What attempts produced (PROTOCOL §15 `artifact` frames): one row per (subject, attempt, kind,
    // name), a repeat replaces it. A workspace's diff (at most 1 MiB) is kept beside its summary,
    // so listing artifacts never reads the diffs. Idempotent on re-run.
    sql: `
      CREATE TABLE IF NOT EXISTS artifacts (
        id INTEGER PRIMARY KEY,
        subject TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        diff TEXT,
        at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS artifacts_key ON artifacts (subject, attempt, kind, name);
    `,
    // A managed agent's `workspace` (PROTOCOL §15: `--workspace` and its options, JSON; NULL: none).
    run: (db) => addMissingColumns(db, 'managed_agents', [['workspace', 'TEXT']]),
  },
  {
    name: '023_verification',
    // Done means verified (PROTOCOL §13). Tasks gain the status `verifying` (the CHECK changes, so
    // the table is rebuilt the way 020 rebuilt the inbox; locks, deps, expiries and budgets point at
    // it), their declaration (`verify`, JSON), the `previous_error` the next attempt is told, the
    // attempt whose "already done?" checks ran (`prechecked_attempt`) and `disposition`
    // (`already_done`). `verifications` keeps each attempt's evidence, for tasks and runs alike.
    // Idempotent on re-run: a table that already has the new status is left as it is.
    rebuildsReferencedTable: true,
    sql: '',
    run: (db) => {
      const tasksSql = db.prepare<[], { sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'tasks'`).get()!.sql;
      if (!tasksSql.includes(`'verifying'`)) {
        db.exec(`
        CREATE TABLE tasks_023 (
          id INTEGER PRIMARY KEY,
          title TEXT NOT NULL,
          role TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('backlog','in_progress','verifying','blocked','done','failed','cancelled')),
          priority INTEGER NOT NULL DEFAULT 0,
          payload TEXT NOT NULL DEFAULT 'null',
          depends_on TEXT NOT NULL DEFAULT '[]',
          trace_id TEXT,
          unmet_deps INTEGER NOT NULL DEFAULT 0,
          attempt INTEGER NOT NULL DEFAULT 0,
          previously_expired INTEGER NOT NULL DEFAULT 0,
          fence INTEGER NOT NULL DEFAULT 0,
          last_holder TEXT,
          note TEXT,
          output TEXT,
          created_at INTEGER NOT NULL,
          updated_at INTEGER NOT NULL,
          claim_reserve BLOB,
          verify TEXT,
          previous_error TEXT,
          prechecked_attempt INTEGER NOT NULL DEFAULT 0,
          disposition TEXT,
          attempt_started_at INTEGER
        );
        `);
        // Every column the old table has is carried over, not only the ones listed above: a file
        // whose tasks gained a column from a later migration before this one ran (a development
        // database made on a branch where 025 came first: its `answer`) keeps that column and its data.
        const copied = carryOverColumns(db, 'tasks', 'tasks_023');
        db.exec(`
        INSERT INTO tasks_023 (${copied}) SELECT ${copied} FROM tasks;
        DROP TABLE tasks;
        ALTER TABLE tasks_023 RENAME TO tasks;
        CREATE INDEX tasks_claimable ON tasks (role, priority DESC, id) WHERE status = 'backlog' AND unmet_deps = 0;
        `);
      }
      // Tasks whose verification runs: found again at start when Gaffer stopped meanwhile.
      db.exec(`CREATE INDEX IF NOT EXISTS tasks_verifying ON tasks (id) WHERE status = 'verifying'`);
      db.exec(`
        CREATE TABLE IF NOT EXISTS verifications (
          id INTEGER PRIMARY KEY,
          subject TEXT NOT NULL,        -- task:<id> or run:<id>
          attempt INTEGER NOT NULL,
          before INTEGER NOT NULL DEFAULT 0,
          attempt_started_at INTEGER NOT NULL,
          started_at INTEGER NOT NULL,
          finished_at INTEGER,
          passed INTEGER,
          checks TEXT
        );
        CREATE INDEX IF NOT EXISTS verifications_subject ON verifications (subject, id);
      `);
    },
  },
  {
    name: '024_spend_live',
    // PROTOCOL §14. usage: the cache part of the input and whether the cost is an estimate or the
    // attempt's final figure (a final report is stored as the correction that makes the sums equal
    // its totals). runs.budget: the cap of the next attempt, set when the operator approves a held
    // run with a new cap. error_streaks: the loop breaker's count of attempts in a row that ended
    // with the same (normalised) error, per task or job. job_attempt_days: attempts dispatched per
    // job and day (the per-job ceiling). Columns are added only where missing: safe to run again.
    sql: `
      CREATE TABLE IF NOT EXISTS error_streaks (
        subject TEXT PRIMARY KEY,
        signature TEXT NOT NULL,
        count INTEGER NOT NULL,
        last_error TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );
      -- The forecast reads a job's recent runs' usage (core/budgets/forecast.ts).
      CREATE INDEX IF NOT EXISTS usage_job ON usage (job_id, at);
      CREATE TABLE IF NOT EXISTS job_attempt_days (
        job_id TEXT NOT NULL,
        day TEXT NOT NULL,
        n INTEGER NOT NULL,
        PRIMARY KEY (job_id, day)
      ) WITHOUT ROWID;
    `,
    run: (db) => {
      addMissingColumns(db, 'usage', [
        ['cache_read_tokens', 'INTEGER NOT NULL DEFAULT 0'],
        ['cache_write_tokens', 'INTEGER NOT NULL DEFAULT 0'],
        ['estimated', 'INTEGER NOT NULL DEFAULT 0'],
        ['final', 'INTEGER NOT NULL DEFAULT 0'],
      ]);
      addMissingColumns(db, 'runs', [['budget', 'TEXT']]);
    },
  },
  {
    name: '025_task_answer',
    // PROTOCOL §16: the operator's answer to a blocked task (the note they unblocked it with),
    // handed to the next holder (the command agent's GAFFER_APPROVAL_NOTE) and cleared by that
    // holder's report. NULL for every other task: old rows need nothing. Idempotent on re-run.
    sql: '',
    run: (db) => addMissingColumns(db, 'tasks', [['answer', 'TEXT']]),
  },
  {
    name: '026_resume_session',
    // PROTOCOL §16: the CLI session an answered task resumes (the session artifact of the attempt
    // that asked, read when the operator unblocks it), handed to the next holder with the answer
    // and cleared with it by that holder's report. NULL for every other task. Idempotent on re-run.
    sql: '',
    run: (db) => addMissingColumns(db, 'tasks', [['resume_session', 'TEXT']]),
  },
  {
    name: '027_usage_attempts',
    // PROTOCOL §14: each attempt's usage totals kept as the rows come (core/logs/usage-store.ts
    // invariant 5), so a usage report and the cap check behind it read one row instead of summing
    // the attempt's rows. usage_quarters: cost and tokens per role and quarter hour (at / 900 000),
    // so the daily caps and spend windows (core/budgets/spend.ts) sum whole quarters from it and only
    // the rows of the two edge quarters, instead of every row in a day or a 168-hour window. The
    // triggers keep both equal to the sums of `usage` whatever writes the rows; the backfill
    // recomputes both from the rows, so running it again changes nothing.
    sql: `
      CREATE TABLE IF NOT EXISTS usage_attempts (
        subject TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cost_nusd INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        reports INTEGER NOT NULL,
        PRIMARY KEY (subject, attempt)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS usage_quarters (
        quarter INTEGER NOT NULL,
        role TEXT NOT NULL,
        cost_nusd INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        reports INTEGER NOT NULL,
        PRIMARY KEY (quarter, role)
      ) WITHOUT ROWID;
      CREATE TRIGGER IF NOT EXISTS usage_totals_insert AFTER INSERT ON usage BEGIN
        ${ADD_NEW_USAGE_ROW}
      END;
      CREATE TRIGGER IF NOT EXISTS usage_totals_delete AFTER DELETE ON usage BEGIN
        ${REMOVE_OLD_USAGE_ROW}
      END;
      CREATE TRIGGER IF NOT EXISTS usage_totals_update AFTER UPDATE ON usage BEGIN
        ${REMOVE_OLD_USAGE_ROW}
        ${ADD_NEW_USAGE_ROW}
      END;
      INSERT OR REPLACE INTO usage_attempts (subject, attempt, input_tokens, output_tokens, cost_nusd, cache_read_tokens, cache_write_tokens, reports)
        SELECT subject, attempt, sum(input_tokens), sum(output_tokens), sum(cost_nusd), sum(cache_read_tokens), sum(cache_write_tokens), count(*)
          FROM usage GROUP BY subject, attempt;
      INSERT OR REPLACE INTO usage_quarters (quarter, role, cost_nusd, tokens, reports)
        SELECT at / 900000, role, sum(cost_nusd), sum(input_tokens + output_tokens), count(*) FROM usage GROUP BY at / 900000, role;
    `,
  },
];
