/**
 * The audit hash chain. Each row's hash covers its own fields and the previous row's hash, so a
 * removed, altered or reordered row breaks every hash after it. Pure: used by the core, the export
 * verifier and the console.
 *
 * Invariants:
 * 1. `rowHash` is a function of the row's values as stored: the writer (AuditLog) stores only
 *    well-formed text, so what is read back is what was hashed, byte for byte.
 * 2. The verifier never stops at a bad row: it reports every one (gap, broken link, content that
 *    does not match its hash) and carries on from the row's stored hash, so one bad row is one
 *    problem, not "everything after it".
 * 3. A row whose hash matches only its text *as written* (an unpaired surrogate that databases from
 *    before the text checks keep as invalid UTF-8; `stored-text.ts`) is intact: it is listed as
 *    `legacyText`, not as a problem.
 */
import { hash } from 'node:crypto';
import type { AuditChainProblem, AuditLegacyTextRow } from '../../common/model';

export const GENESIS_HASH = '0'.repeat(64);

/** Most problems (and legacy rows) listed in one result; `problemCount` has them all. */
export const MAX_LISTED_PROBLEMS = 1000;

export interface ChainRow {
  id: number;
  at: number | string;
  type: string;
  actor: string;
  subject: string;
  /** The detail exactly as stored (JSON text). */
  detail: string;
  traceId: string | null;
  prevHash: string;
  hash: string;
}

export function rowHash(r: Omit<ChainRow, 'hash'>): string {
  const at = typeof r.at === 'number' ? r.at : Date.parse(r.at);
  const canonical = JSON.stringify([r.id, at, r.type, r.actor, r.subject, r.detail, r.traceId, r.prevHash]);
  // One-shot hash: half the cost of a Hash object, and it runs twice per claim+report.
  return hash('sha256', canonical, 'hex');
}

export type ChainProblem = AuditChainProblem;
export type ChainProblemKind = ChainProblem['kind'];
/** Invariant 3: a row that verifies over its text as written, which reads back changed. */
export type LegacyTextRow = AuditLegacyTextRow;

export interface ChainCheck {
  ok: boolean;
  /** Rows looked at (every one, bad or not). */
  checked: number;
  /** The first problem's row and reason (kept from the single-failure format). */
  brokenAt?: number;
  reason?: string;
  /** Every problem, oldest first (the first MAX_LISTED_PROBLEMS); present when there is one. */
  problems?: ChainProblem[];
  /** All problems, listed or not. */
  problemCount?: number;
  /** Invariant 3; present when there is one. */
  legacyText?: LegacyTextRow[];
  legacyTextCount?: number;
}

/**
 * For a row whose hash does not match: the same row with its text as originally written, and
 * which columns differ, when the store can tell (stored-text.ts); else undefined.
 */
export type AsWritten = (r: ChainRow) => { row: ChainRow; fields: string[] } | undefined;

export interface ChainVerifierOptions {
  /** The id the first row should have (a missing first row is then a gap). */
  firstId?: number;
  asWritten?: AsWritten;
  /** Called with each problem as it is found (also when the list is full). */
  onProblem?: (p: ChainProblem) => void;
}

/**
 * Verifies consecutive rows. `anchor` is the expected prevHash of the first row (GENESIS_HASH
 * for a full log; for an exported range, the first row's own prevHash is taken on trust).
 */
export class ChainVerifier {
  private expectedPrev: string | undefined;
  private nextId: number | undefined;
  private count = 0;
  private readonly problems: ChainProblem[] = [];
  private problemCount = 0;
  private readonly legacy: LegacyTextRow[] = [];
  private legacyCount = 0;
  private readonly asWritten: AsWritten | undefined;
  private readonly onProblem: ((p: ChainProblem) => void) | undefined;

  constructor(anchor?: string, opts: ChainVerifierOptions = {}) {
    this.expectedPrev = anchor;
    this.nextId = opts.firstId;
    this.asWritten = opts.asWritten;
    this.onProblem = opts.onProblem;
  }

  /** Checks one row (invariant 2: whatever came before); true when it verified. */
  push(r: ChainRow): boolean {
    this.count++;
    let ok = true;
    const expected = this.nextId;
    if (expected !== undefined && r.id > expected) {
      this.problem(expected, 'gap', r.id === expected + 1 ? `gap: row ${expected} missing` : `gap: rows ${expected}–${r.id - 1} missing`);
      ok = false;
    } else if (expected !== undefined && r.id < expected) {
      // Not part of the chain where it stands: the chain carries on from the row before it.
      this.problem(r.id, 'gap', `row ${r.id} is out of order or repeated`);
      return false;
    } else if (this.expectedPrev !== undefined && r.prevHash !== this.expectedPrev) {
      this.problem(r.id, 'link', 'link to the previous row broken');
      ok = false;
    }
    if (rowHash(r) !== r.hash && !this.verifiesAsWritten(r)) {
      this.problem(r.id, 'content', 'row content does not match its hash');
      ok = false;
    }
    this.expectedPrev = r.hash;
    this.nextId = Math.max(r.id + 1, expected ?? 0);
    return ok;
  }

  /** Reports rows missing between the last row pushed and `lastId` (inclusive). */
  expectEnd(lastId: number): void {
    const next = this.nextId;
    if (next === undefined || next > lastId) return;
    this.problem(next, 'gap', next === lastId ? `gap: row ${next} missing` : `gap: rows ${next}–${lastId} missing`);
    this.nextId = lastId + 1;
  }

  get failed(): boolean {
    return this.problemCount > 0;
  }

  result(): ChainCheck {
    const out: ChainCheck = { ok: this.problemCount === 0, checked: this.count };
    const first = this.problems[0];
    if (first) Object.assign(out, { brokenAt: first.id, reason: first.reason, problems: [...this.problems], problemCount: this.problemCount });
    if (this.legacyCount > 0) Object.assign(out, { legacyText: [...this.legacy], legacyTextCount: this.legacyCount });
    return out;
  }

  private verifiesAsWritten(r: ChainRow): boolean {
    const written = this.asWritten?.(r);
    if (!written || rowHash(written.row) !== r.hash) return false;
    this.legacyCount++;
    if (this.legacy.length < MAX_LISTED_PROBLEMS) {
      this.legacy.push({
        id: r.id,
        fields: written.fields,
        reason: `${written.fields.join(', ')} holds an unpaired UTF-16 surrogate, stored as invalid UTF-8 by a Gaffer from before text was checked; the row verifies over its bytes as stored (not altered), but reads back with U+FFFD in its place`,
      });
    }
    return true;
  }

  private problem(id: number, kind: ChainProblemKind, reason: string): void {
    this.problemCount++;
    const p = { id, kind, reason };
    if (this.problems.length < MAX_LISTED_PROBLEMS) this.problems.push(p);
    this.onProblem?.(p);
  }
}
