/**
 * The audit log's integrity check at start: was it changed while Gaffer was not looking?
 *
 * What is checked (bounded, so a start stays fast on a big log — a full check is `GET /audit/verify`):
 * 1. The append-only triggers exist exactly as the schema made them; missing or altered ones are
 *    restored (a finding: someone dropped them, so rows may have been changed).
 * 2. The chain's tail: the newest TAIL_CHECK_ROWS rows, each hash and each link (an edited,
 *    byte-flipped, deleted or inserted row in the tail), plus SAMPLE_CHECK_ROWS random older rows
 *    with their predecessors (a probe, not a proof).
 * 3. The head record kept outside the database (head-record.ts): the row it names must exist with
 *    the hash it names. It may name an older row than the newest (a crash between a commit and
 *    the record's write, or a power loss: head-record.ts invariant 1) — not an alarm; a row beyond
 *    the newest (rows deleted from the end), a different hash, or a record that the database says
 *    was kept but is gone or unreadable, is. A database that says it never kept one (new, or
 *    from before this check) starts one, whatever file lies beside it.
 *
 * Invariants:
 * 1. The head record is read before the database (a second process committing in between can
 *    only move the database further ahead of what was read).
 * 2. Every finding is loud once: one `audit.tampered` audit row and one occurrence of a critical
 *    `storage_fault` inbox item (subject `audit:log`), in one transaction; `/status` says
 *    `ok: false` while that item is live. A damaged row stays damaged, so chain findings are
 *    remembered (settings `audit.integrity`, `known`) and not reported again at the next start.
 * 3. Nothing is ever rewritten in the log itself; the check only adds rows, restores the
 *    triggers and rewrites the head record.
 * 4. A clean start writes nothing (the first start with this check records that the head record
 *    is kept, once).
 */
import { randomInt } from 'node:crypto';
import type { Clock } from '../../common/clock';
import type { Logger } from '../../common/logger';
import type { StorageStatus } from '../../common/model';
import type { InboxItem, InboxKind } from '../../common/attention';
import type { Db } from '../db/open';
import { settingsRow } from '../db/settings-row';
import type { Store } from '../db/store';
import { auditRowToChainRow, type AuditLog } from './audit-store';
import { ChainVerifier, GENESIS_HASH, type ChainProblem } from './hash-chain';
import type { AuditHeadFile, HeadRead } from './head-record';
import { auditRowsAsWritten } from './stored-text';
import { auditHashAt, auditRowsFrom, maxAuditId, prepareAuditBetween, prepareAuditHashOf, recreateTrigger, schemaTriggers } from './chain-store';

/** Newest rows verified at every start (about 30 ms; the start-up target is < 2 s on 1M rows). */
export const TAIL_CHECK_ROWS = 10_000;
/** Older rows probed at random, each with its predecessor. */
export const SAMPLE_CHECK_ROWS = 64;
/** Chain findings remembered so a restart does not report them again (invariant 2). */
export const MAX_KNOWN = 1000;

export const INTEGRITY_SUBJECT = 'audit:log';
export const INTEGRITY_ACTOR = 'integrity';
export const TAMPERED_TYPE = 'audit.tampered';

/** The append-only triggers, as migrations 002 and 007 made them (compared with spaces collapsed). */
export const APPEND_ONLY_TRIGGERS: Readonly<Record<string, string>> = {
  audit_no_update: "CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END",
  audit_no_delete: "CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit BEGIN SELECT RAISE(ABORT, 'audit log is append-only'); END",
  audit_subjects_no_update: "CREATE TRIGGER audit_subjects_no_update BEFORE UPDATE ON audit_subjects BEGIN SELECT RAISE(ABORT, 'the audit subject index is append-only'); END",
  audit_subjects_no_delete: "CREATE TRIGGER audit_subjects_no_delete BEFORE DELETE ON audit_subjects BEGIN SELECT RAISE(ABORT, 'the audit subject index is append-only'); END",
};

export interface IntegrityFinding {
  kind: 'triggers' | 'chain' | 'head';
  message: string;
  /** The row it is about. */
  id?: number;
}

interface Stored {
  /** The head record has been created (durably) for this database: from now on it must exist. */
  headKept: boolean;
  /** Chain findings already reported, as `<id>:<kind>`. */
  known: string[];
}

export interface StartReport {
  findings: IntegrityFinding[];
  /** The id range of the tail that was verified, and how many older rows were probed. */
  tail: { from: number; to: number };
  sampled: number;
}

const collapse = (sql: string) => sql.replace(/\s+/g, ' ').trim();
const chainKey = (p: ChainProblem) => `${p.id}:${p.kind}`;

/** Trigger names that are missing or not as the schema made them. */
export function damagedTriggers(db: Db): string[] {
  const rows = schemaTriggers(db);
  const have = new Map(rows.map((r) => [r.name, collapse(r.sql ?? '')]));
  return Object.keys(APPEND_ONLY_TRIGGERS).filter((name) => have.get(name) !== collapse(APPEND_ONLY_TRIGGERS[name]!));
}

/** Drops and recreates the named triggers (inside the caller's write). */
function restoreTriggers(db: Db, names: string[]): void {
  for (const name of names) {
    recreateTrigger(db, name, APPEND_ONLY_TRIGGERS[name]!);
  }
}

/** Verifies the newest `rows` rows and `sample` random older ones (with their predecessors). */
export function checkChainTail(db: Db, rows = TAIL_CHECK_ROWS, sample = SAMPLE_CHECK_ROWS): { problems: ChainProblem[]; from: number; to: number; sampled: number } {
  const to = maxAuditId(db);
  const from = Math.max(1, to - rows + 1);
  if (to === 0) return { problems: [], from: 1, to: 0, sampled: 0 };
  const asWritten = auditRowsAsWritten(db);
  const hashOf = prepareAuditHashOf(db);
  const anchor = from === 1 ? GENESIS_HASH : hashOf.get(from - 1);
  const problems: ChainProblem[] = [];
  const tail = new ChainVerifier(anchor, { firstId: from, asWritten, onProblem: (p) => problems.push(p) });
  for (const r of auditRowsFrom(db, from)) tail.push(auditRowToChainRow(r));
  tail.expectEnd(to);
  // The probe: rows below the tail, each checked with the row before it (its hash and its link).
  const pair = prepareAuditBetween(db);
  const seen = new Set(problems.map(chainKey));
  const addNew = (p: ChainProblem) => {
    if (seen.has(chainKey(p))) return;
    seen.add(chainKey(p));
    problems.push(p);
  };
  let sampled = 0;
  for (let i = 0; from > 2 && i < sample; i++) {
    const id = randomInt(2, from);
    const v = new ChainVerifier(undefined, { firstId: id - 1, asWritten, onProblem: addNew });
    for (const r of pair.all(id - 1, id)) v.push(auditRowToChainRow(r));
    v.expectEnd(id);
    sampled++;
  }
  return { problems: problems.slice(0, MAX_KNOWN), from, to, sampled };
}

/** What the head record says about the database (invariant 1: `head` was read before it). */
function compareHead(db: Db, head: HeadRead, newest: number): IntegrityFinding | undefined {
  const file = 'the head record kept outside the database (gaffer.db-audit-head)';
  if (head.state === 'absent') return { kind: 'head', message: `${file} is gone, so rows deleted from the end of the log cannot be ruled out` };
  if (head.state === 'unreadable') return { kind: 'head', message: `${file} ${head.reason}, so rows deleted from the end of the log cannot be ruled out` };
  if (head.id === 0) return undefined;
  const stored = auditHashAt(db, head.id);
  if (stored === undefined && head.id > newest) {
    const n = head.id - newest;
    return { kind: 'head', id: head.id, message: `the newest ${n === 1 ? 'row was' : `${n} rows were`} deleted: ${file} names row ${head.id}, the log ends at row ${newest}` };
  }
  if (stored === undefined) return { kind: 'head', id: head.id, message: `row ${head.id}, named by ${file}, is missing` };
  if (stored !== head.hash) return { kind: 'head', id: head.id, message: `row ${head.id} is not the row ${file} names (its hash differs): it was changed or the log was rewritten from there` };
  return undefined;
}

/**
 * What the check needs of the inbox (core/inbox's `Inbox` fits it): raise its finding, read it
 * back. Declared here so the audit log stays below the inbox that is built on it.
 */
export interface IntegrityInbox {
  raise(occ: { key: string; kind: InboxKind; subject: string; about: Record<string, unknown>; entry: Record<string, unknown> }): unknown;
  live(kind: InboxKind, subject: string): Pick<InboxItem, 'title' | 'detail' | 'at'> | undefined;
}

export interface AuditIntegrityDeps {
  db: Db;
  store: Store;
  audit: AuditLog;
  inbox: IntegrityInbox;
  clock: Clock;
  logger: Logger;
  /** Absent for an in-memory database. */
  headFile?: AuditHeadFile;
}

export class AuditIntegrity {
  /** A finding that could not be recorded (storage refused the write): still said by `status`. */
  private unrecorded: StorageStatus | undefined;
  private readonly stored;

  constructor(private readonly deps: AuditIntegrityDeps) {
    this.stored = settingsRow<Stored>(deps.db, 'audit.integrity');
  }

  /** The checks above; reports what it found (invariant 2) and starts keeping the head record. */
  checkAtStart(): StartReport {
    const { db, store, audit, headFile } = this.deps;
    const head: HeadRead = headFile ? headFile.read() : { state: 'absent' }; // invariant 1: first
    const stored: Stored = { headKept: false, known: [], ...this.stored.read() };
    const triggers = damagedTriggers(db);
    const chain = checkChainTail(db);
    const known = new Set(stored.known);
    const findings: IntegrityFinding[] = [];
    if (triggers.length > 0) findings.push({ kind: 'triggers', message: `the append-only triggers ${triggers.join(', ')} were missing or altered (restored): rows could be changed or deleted meanwhile` });
    // A database that never kept a head record (new, or from before this check) is not compared
    // with whatever file lies beside it (one left by a database deleted to start afresh).
    const headFinding = headFile && stored.headKept ? compareHead(db, head, chain.to) : undefined;
    if (headFinding) findings.push(headFinding);
    const fresh = chain.problems.filter((p) => !known.has(chainKey(p)));
    for (const p of fresh) findings.push({ kind: 'chain', id: p.id, message: `row ${p.id}: ${p.reason}` });

    // Head-record invariant 3: a record that is new, unreadable or not this database's is created
    // durably before the database says it is kept.
    let recordExists = stored.headKept && head.state === 'ok';
    if (headFile && !recordExists) {
      try {
        const h = audit.head();
        headFile.create(h.id, h.hash);
        recordExists = true;
      } catch (e) {
        this.deps.logger.error('audit: cannot write the head record; rows deleted from the end of the log will not be noticed', { path: headFile.path, error: (e as Error).message });
      }
    }
    if (headFile) audit.keepHead(headFile);
    const next: Stored = { headKept: stored.headKept || recordExists, known: [...known, ...fresh.map(chainKey)].slice(-MAX_KNOWN) };
    if (findings.length === 0 && next.headKept === stored.headKept) return { findings, tail: { from: chain.from, to: chain.to }, sampled: chain.sampled };

    try {
      store.write(() => {
        if (triggers.length > 0) restoreTriggers(db, triggers);
        this.stored.write(next);
        if (findings.length > 0) this.report(findings, head, chain);
      });
    } catch (e) {
      this.deps.logger.error('audit: the integrity findings could not be recorded', { error: (e as Error).message });
      if (findings.length > 0) this.unrecorded = { state: 'tampered', message: `${words(findings).title}: ${words(findings).detail}`, since: new Date(this.deps.clock.now()).toISOString() };
    }
    return { findings, tail: { from: chain.from, to: chain.to }, sampled: chain.sampled };
  }

  /** Invariant 2: the audit row and the inbox occurrence, inside the caller's write. */
  private report(findings: IntegrityFinding[], head: HeadRead, chain: { from: number; to: number; sampled: number }): void {
    const { audit, inbox, logger } = this.deps;
    const w = words(findings);
    const listed = findings.slice(0, 100);
    const id = audit.append({
      type: TAMPERED_TYPE,
      actor: INTEGRITY_ACTOR,
      subject: INTEGRITY_SUBJECT,
      detail: {
        findings: listed,
        findingCount: findings.length,
        checked: { tailFrom: chain.from, tailTo: chain.to, sampled: chain.sampled },
        headRecord: head.state === 'ok' ? { id: head.id, hash: head.hash } : head.state,
      },
    });
    inbox.raise({
      key: `audit-integrity:${id}`,
      kind: 'storage_fault',
      subject: INTEGRITY_SUBJECT,
      about: {},
      entry: { title: w.title, detail: w.detail, auditId: id, findings: listed.slice(0, 20), findingCount: findings.length },
    });
    logger.error(`audit integrity: ${w.title}: ${w.detail}`);
  }

  /** Why the audit log is not to be trusted as it stands, or null (invariant 2). */
  status(): StorageStatus | null {
    const item = this.deps.inbox.live('storage_fault', INTEGRITY_SUBJECT);
    if (item) return { state: 'tampered', message: `${item.title}: ${item.detail}`, since: item.at };
    return this.unrecorded ?? null;
  }
}

/** The inbox item's words for a set of findings. */
function words(findings: IntegrityFinding[]): { title: string; detail: string } {
  const onlyTriggers = findings.every((f) => f.kind === 'triggers');
  const shown = findings.slice(0, 5).map((f) => f.message);
  const more = findings.length > shown.length ? `; and ${findings.length - shown.length} more` : '';
  return {
    title: onlyTriggers ? 'The audit log’s append-only triggers had been removed' : 'The audit log was changed outside Gaffer',
    detail: `Found at start: ${shown.join('; ')}${more}. Compare with a backup or an export; GET /audit/verify checks the whole chain. Acknowledge this item once you have looked.`,
  };
}
