/**
 * The audit hash chain. Each row's hash covers its own fields and the previous row's hash, so a
 * removed, altered or reordered row breaks every hash after it. Pure: used by the core, the export
 * verifier and the console.
 */
import { hash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

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

export interface ChainCheck {
  ok: boolean;
  checked: number;
  /** First row whose hash or link does not match. */
  brokenAt?: number;
  reason?: string;
}

/**
 * Verifies consecutive rows. `anchor` is the expected prevHash of the first row (GENESIS_HASH
 * for a full log; for an exported range, the first row's own prevHash is taken on trust).
 */
export class ChainVerifier {
  private expectedPrev: string | undefined;
  private lastId: number | undefined;
  private count = 0;
  private failure: { id: number; reason: string } | undefined;

  constructor(anchor?: string) {
    this.expectedPrev = anchor;
  }

  push(r: ChainRow): boolean {
    if (this.failure) return false;
    const fail = (reason: string) => {
      this.failure = { id: r.id, reason };
      return false;
    };
    if (this.lastId !== undefined && r.id !== this.lastId + 1) return fail(`gap: row ${this.lastId + 1} missing`);
    if (this.expectedPrev !== undefined && r.prevHash !== this.expectedPrev) return fail('link to the previous row broken');
    if (rowHash(r) !== r.hash) return fail('row content does not match its hash');
    this.expectedPrev = r.hash;
    this.lastId = r.id;
    this.count++;
    return true;
  }

  result(): ChainCheck {
    return this.failure
      ? { ok: false, checked: this.count, brokenAt: this.failure.id, reason: this.failure.reason }
      : { ok: true, checked: this.count };
  }
}
