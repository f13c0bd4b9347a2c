/** The audit log: browse, count, verify, export. */
import { z } from 'zod';
import type { AuditChainProblem, AuditLegacyTextRow, AuditPage } from '../model';
import { auditFilterShape, auditQueryInput } from '../schemas';
import { op } from './define';
import { auditChainProblem, auditLegacyTextRow, auditPage } from './shapes';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;

/** `exact` is false when counting stopped at the cap: the true count is at least `count`. */
export interface AuditCount {
  count: number;
  exact: boolean;
}

export interface AuditVerifyResult {
  ok: boolean;
  checked: number;
  /** The first problem's row and reason. */
  brokenAt?: number;
  reason?: string;
  /** Every problem (the first 1000), when there is one; `problemCount` counts them all. */
  problems?: AuditChainProblem[];
  problemCount?: number;
  /** Rows from before text was checked that verify over their stored bytes; `legacyTextCount` counts them all. */
  legacyText?: AuditLegacyTextRow[];
  legacyTextCount?: number;
}

export const auditVerifyResult = z.object({
  ok: z.boolean(),
  checked: z.number(),
  brokenAt: z.number().optional(),
  reason: z.string().optional(),
  problems: z.array(auditChainProblem).optional(),
  problemCount: z.number().optional(),
  legacyText: z.array(auditLegacyTextRow).optional(),
  legacyTextCount: z.number().optional(),
});

/** What `POST /audit/verify-export` proves about an exported file (core/audit/audit-export.ts `ExportCheck`). */
const exportCheck = z.object({
  ok: z.boolean(),
  format: z.enum(['jsonl', 'csv']),
  rows: z.number(),
  firstId: z.number().nullable(),
  lastId: z.number().nullable(),
  coverage: z.enum(['chain', 'rows', 'empty']),
  segments: z.number(),
  linksChecked: z.number(),
  anchoredAtGenesis: z.boolean(),
  brokenAt: z.number().optional(),
  line: z.number().optional(),
  reason: z.string().optional(),
  problems: z.array(z.object({ line: z.number(), id: z.number().optional(), reason: z.string() })).optional(),
  problemCount: z.number().optional(),
  summary: z.string(),
});

export const auditOps = {
  'audit.query': op<AuditPage>()({
    summary: 'Page through the audit log, filtered by type, actor, subject, time range or text; the cursor is the event id.',
    input: auditQueryInput,
    result: auditPage,
    callers: BOTH,
    reason: 'none',
    rest: [
      {
        method: 'GET',
        path: '/audit',
        status: {
          200: '`{items: [event], next, partial}`: pass `next` as `after` for the next page, in either `order`; `partial` is true when the page stopped at its scan budget (a filter that cannot use an index) with fewer than `limit` items — keep paging while `next` is not null',
        },
      },
    ],
  }),
  /** Matching rows for a filter (the audit browser's total and the export's progress), counted up to a cap. */
  'audit.count': op<AuditCount>()({
    summary: 'Count the audit events matching a filter.',
    input: z.strictObject(auditFilterShape),
    result: z.object({ count: z.number(), exact: z.boolean() }),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/audit/count', status: { 200: '`{count, exact}`' } }],
  }),
  'audit.verify': op<AuditVerifyResult>()({
    summary: 'Verify the hash chain of the live audit log (a range of ids, or all of it).',
    input: empty,
    result: auditVerifyResult,
    callers: BOTH,
    reason: 'none',
    rest: [
      {
        method: 'GET',
        path: '/audit/verify',
        status: { 200: 'the verification result' },
        response: auditVerifyResult.extend({ firstId: z.number(), lastId: z.number(), anchor: z.enum(['genesis', 'previous_row', 'none']) }),
      },
    ],
  }),
  'audit.export': op<string>()({
    summary: 'Stream the filtered audit log as JSON lines or CSV; each row carries its hash, so the file verifies on its own.',
    input: z.strictObject({ ...auditFilterShape, format: z.enum(['jsonl', 'csv']) }),
    result: z.string(),
    callers: ['operator'],
    reason: 'none',
    rest: [{ method: 'GET', path: '/audit/export', status: { 200: 'the export file (streamed)' }, response: null, mediaTypes: ['application/x-ndjson', 'text/csv'] }],
  }),
  'audit.verifyExport': op<z.output<typeof exportCheck>>()({
    summary: 'Verify an exported audit file (the request body, streamed) against its row hashes.',
    input: z.strictObject({ format: z.enum(['jsonl', 'csv']).optional(), contiguous: z.boolean().optional() }),
    result: exportCheck,
    callers: ['operator'],
    reason: 'none',
    rest: [{ method: 'POST', path: '/audit/verify-export', status: { 200: 'the verification result' } }],
  }),
} as const;
