/**
 * Bulk seeding for the performance specs: writes tasks, instances, expired locks and a valid
 * audit hash chain straight into a data directory's database before Gaffer starts. Uses the
 * core's own migrations (openDatabase) and hash function (rowHash), so the server reads the
 * data as its own and `audit.verify` passes.
 */
import { DEFAULT_LOG_SETTINGS } from '../src-main/common/logs';
import { LogStore, type IncomingLine } from '../src-main/core/logs/log-store';
import path from 'node:path';
import { GENESIS_HASH, rowHash } from '../src-main/core/audit/hash-chain';
import { openDatabase } from '../src-main/core/db/open';

export interface SeedOptions {
  auditRows: number;
  tasks: number;
  roles?: string[];
  instances?: number;
  expiredToday?: number;
  /** The newest audit row's time (ms); rows spread back over `spanDays`. */
  now?: number;
  spanDays?: number;
}

export interface SeedResult {
  auditRows: number;
  tasks: number;
  roles: string[];
  instanceIds: string[];
  /** An actor with few rows (an operator), a busy instance, a mid-range subject. */
  samples: { rareActor: string; busyActor: string; subject: string; rareType: string; text: string };
  ms: { tasks: number; audit: number };
}

const WORDS = ['invoice', 'report', 'deploy', 'migration', 'summary', 'review', 'backfill', 'index', 'cache', 'refund'];

export function seedDatabase(dataDir: string, o: SeedOptions): SeedResult {
  const db = openDatabase(path.join(dataDir, 'gaffer.db'));
  db.pragma('synchronous = OFF');
  const roles = o.roles ?? ['dev', 'pm', 'reviewer', 'ops', 'data'];
  const now = o.now ?? Date.now();
  const nInst = o.instances ?? 50;
  const instanceIds = Array.from({ length: nInst }, (_, i) => `inst_perf_${String(i).padStart(3, '0')}`);

  // ---- tasks, instances, expired locks ----------------------------------------------------------
  const t0 = Date.now();
  const insTask = db.prepare(
    `INSERT INTO tasks (id, title, role, status, priority, payload, depends_on, unmet_deps, attempt, previously_expired, fence, last_holder, note, output, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, '{}', '[]', 0, ?, 0, ?, ?, ?, 'null', ?, ?)`,
  );
  const insInst = db.prepare(
    `INSERT INTO instances (id, role, name, version, status, token_id, connected_at, last_heartbeat_at, disconnected_at) VALUES (?, ?, ?, '1.0.0', 'offline', NULL, ?, ?, ?)`,
  );
  const insExp = db.prepare(`INSERT INTO lock_expiries (task_id, instance_id, fence, reason, expired_at, reclaimed_by, reclaimed_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  db.transaction(() => {
    for (let id = 1; id <= o.tasks; id++) {
      const r = Math.floor(id / roles.length) % 20;
      // 70% done, 20% ready, 4% failed, 2% blocked, 4% cancelled.
      const status = r < 14 ? 'done' : r < 18 ? 'backlog' : r === 18 ? (id % 40 === 18 ? 'blocked' : 'failed') : 'cancelled';
      const created = now - 7 * 86400_000 + Math.floor((id / o.tasks) * 7 * 86400_000) - 60_000;
      const claimed = status !== 'backlog' && status !== 'cancelled';
      insTask.run(
        id,
        `Perf task ${id}: ${WORDS[id % WORDS.length]} for account ${id % 997}`,
        roles[id % roles.length]!,
        status,
        id % 7,
        claimed ? 1 : 0,
        claimed ? 1 : 0,
        claimed ? instanceIds[id % nInst]! : null,
        status === 'failed' ? 'upstream API returned 502' : status === 'blocked' ? 'waiting for credentials' : null,
        created,
        created + 30_000,
      );
    }
    instanceIds.forEach((iid, i) => insInst.run(iid, roles[i % roles.length]!, `perf-agent-${i}`, now - 86400_000, now - 3600_000, now - 3600_000));
    const dayStart = new Date(now);
    dayStart.setHours(0, 0, 0, 0);
    const n = o.expiredToday ?? 24;
    for (let i = 0; i < n; i++) {
      const at = dayStart.getTime() + Math.floor(((now - dayStart.getTime() - 120_000) * (i + 1)) / (n + 1));
      const reclaimed = i % 3 !== 0;
      insExp.run(1 + i * 37, instanceIds[i % nInst]!, 1, i % 2 ? 'heartbeat_timeout' : 'lock_window', at, reclaimed ? instanceIds[(i + 7) % nInst]! : null, reclaimed ? at + 4000 + i * 100 : null);
    }
  })();
  const tasksMs = Date.now() - t0;

  // ---- audit chain ---------------------------------------------------------------------------------
  const t1 = Date.now();
  const start = now - (o.spanDays ?? 7) * 86400_000;
  const step = (now - 60_000 - start) / Math.max(1, o.auditRows);
  const ins = db.prepare('INSERT INTO audit (id, at, type, actor, subject, detail, trace_id, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?,?)');
  let prev = GENESIS_HASH;
  const BATCH = 50_000;
  for (let base = 1; base <= o.auditRows; base += BATCH) {
    db.transaction(() => {
      for (let id = base; id < base + BATCH && id <= o.auditRows; id++) {
        const at = Math.floor(start + id * step);
        const taskId = (id % o.tasks) + 1;
        const inst = instanceIds[(id * 7) % nInst]!;
        const k = id % 1000;
        let type: string;
        let actor = inst;
        let detail: unknown;
        if (k < 400) {
          type = 'lock.claim';
          detail = { fence: 1 + (id % 3), attempt: 1 + (id % 3), expiresAt: new Date(at + 7_200_000).toISOString(), previouslyExpired: id % 3 > 0, role: roles[taskId % roles.length] };
        } else if (k < 800) {
          type = 'lock.release';
          detail = { fence: 1 + (id % 3), from: 'in_progress', to: k % 50 === 0 ? 'failed' : 'done' };
        } else if (k < 950) {
          type = 'lock.renew';
          detail = { fence: 1, expiresAt: new Date(at + 7_200_000).toISOString() };
        } else if (k < 990) {
          type = 'task.create';
          actor = 'operator:http';
          detail = { title: `Perf task ${taskId}: ${WORDS[taskId % WORDS.length]}`, role: roles[taskId % roles.length], priority: taskId % 7 };
        } else if (k < 999) {
          type = 'lock.expire';
          actor = 'watchdog';
          detail = { holder: inst, fence: 1, reason: 'heartbeat_timeout', expiresAt: new Date(at).toISOString() };
        } else {
          type = 'operator.cancel';
          actor = 'operator:browser';
          detail = { reason: `duplicate of ${taskId + 1}`, from: 'backlog' };
        }
        const detailText = JSON.stringify(detail);
        const subject = `task:${taskId}`;
        const traceId = id % 5 === 0 ? `tr_${id.toString(36)}` : null;
        const hash = rowHash({ id, at, type, actor, subject, detail: detailText, traceId, prevHash: prev });
        ins.run(id, at, type, actor, subject, detailText, traceId, prev, hash);
        prev = hash;
      }
    })();
  }
  // What AuditLog's bulk subject indexing would have done for these rows (migration 007).
  db.exec(`INSERT INTO audit_subjects (subject, id) SELECT subject, id FROM audit;
    UPDATE audit_subjects_progress SET indexed_to = (SELECT coalesce(max(id), 0) FROM audit)`);
  const auditMs = Date.now() - t1;
  db.pragma('synchronous = FULL');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
  return {
    auditRows: o.auditRows,
    tasks: o.tasks,
    roles,
    instanceIds,
    samples: { rareActor: 'operator:browser', busyActor: instanceIds[3]!, subject: `task:${Math.floor(o.tasks / 2)}`, rareType: 'lock.expire', text: 'duplicate of 2' },
    ms: { tasks: tasksMs, audit: auditMs },
  };
}

/**
 * `lines` log lines for `subject`'s attempt 1, written straight into the data directory's log
 * segments (as the log worker would), before Gaffer starts: every 7th line on standard error,
 * every 11th coloured, every 101st an agent line. Returns how long it took.
 */
export function seedLogs(dataDir: string, subject: string, lines: number, now = Date.now()): number {
  const t0 = Date.now();
  const store = new LogStore(path.join(dataDir, 'logs'), now);
  const batch = 20_000;
  for (let from = 1; from <= lines; from += batch) {
    const chunk: IncomingLine[] = [];
    for (let n = from; n < Math.min(lines + 1, from + batch); n++) {
      const at = now - (lines - n) * 10;
      if (n % 101 === 0) chunk.push({ text: `checkpoint ${n}: step done`, stream: 'agent', level: 'info', at, seq: n });
      else if (n % 7 === 0) chunk.push({ text: `warning: retrying request ${n} after a timeout`, stream: 'stderr', level: 'warn', at, seq: n });
      else if (n % 11 === 0) chunk.push({ text: `\x1b[32m✓\x1b[0m test ${n} passed in \x1b[1m${n % 97} ms\x1b[0m`, stream: 'stdout', at, seq: n });
      else chunk.push({ text: `line ${n}: processing item ${n * 7919 % 100_003} of the batch`, stream: 'stdout', at, seq: n });
    }
    store.append([{ subject, attempt: 1, lines: chunk }], now, DEFAULT_LOG_SETTINGS);
  }
  store.close();
  return Date.now() - t0;
}

/** Usage rows for the first tasks of each role over the last 14 days (what agents' `usage` frames leave). */
export function seedUsage(dataDir: string, roles: string[], now = Date.now()): void {
  const db = openDatabase(path.join(dataDir, 'gaffer.db'));
  const ins = db.prepare(
    'INSERT INTO usage (subject, attempt, role, job_id, model, instance_id, input_tokens, output_tokens, cost_nusd, at) VALUES (?, 1, ?, NULL, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let day = 0; day < 14; day++) {
      roles.forEach((role, r) => {
        const n = 1 + ((day * 7 + r * 3) % 5);
        for (let k = 0; k < n; k++) {
          const inTok = 2000 + ((day * 131 + r * 17 + k * 7) % 9000);
          ins.run(`task:${1 + r + k * roles.length}`, role, 'demo-model', `inst_perf_${String(r).padStart(3, '0')}`, inTok, Math.round(inTok / 6), inTok * 3000 + 15_000_000 * r, now - day * 86_400_000 - k * 600_000);
        }
      });
    }
  })();
  db.close();
}
