/**
 * A refused agent write leaves evidence: when an agent acts on a lock or a run it no longer holds
 * (or asks for a transition that is not allowed), its write rolls back and the refusal is audited
 * in a write of its own, then the error goes back to the agent.
 */
import { GafferError } from '../../common/errors';
import type { Store } from '../db/store';
import type { AuditInput, AuditLog } from './audit-store';

/** The refusals that are audited: someone acting without the right to. */
const AUDITED_CODES = new Set(['not_holder', 'invalid_transition']);

/** Runs `fn` in a write; an audited refusal is recorded (`refusal(err)`) after the write rolled back, and rethrown. */
export function writeOrAuditRefusal<T>(ctx: { store: Store; audit: AuditLog }, fn: () => T, refusal: (err: GafferError) => AuditInput): T {
  try {
    return ctx.store.write(fn);
  } catch (err) {
    if (err instanceof GafferError && AUDITED_CODES.has(err.code)) ctx.audit.record(refusal(err));
    throw err;
  }
}
