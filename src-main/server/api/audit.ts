/** `/audit…`: browse, count, export (streamed) and verify the audit log. */
import { z } from 'zod';
import type { AuditFilterInput } from '../../common/schemas';
import { EXPORT_FORMATS, verifyExport } from '../../core/audit/audit-export';
import type { Core } from '../../core/create-core';
import { cappedBody } from '../guards';
import { opRoute, withDoc } from './define-route';
import { afterParam, idParam, limitParam, ok, parseQuery, STREAMED, streamChunks, type Route } from './router';

const field = z.string().min(1).max(200);
const filterShape = {
  /** Repeat `type=` for several types, or use `types=a,b`. */
  type: z.union([field, z.array(field).min(1).max(20)]).optional(),
  types: z.string().min(1).max(4200).optional(),
  actor: field.optional(),
  subject: field.optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
  text: z.string().min(1).max(200).optional(),
  after: afterParam.optional(),
  before: idParam.optional(),
};
const listQuery = z.strictObject({ ...filterShape, limit: limitParam.optional(), order: z.enum(['asc', 'desc']).optional() });
const countQuery = z.strictObject(filterShape);
const exportQuery = z.strictObject({ ...filterShape, format: z.enum(EXPORT_FORMATS).optional() });
const verifyQuery = z.strictObject({ after: afterParam.optional(), before: idParam.optional() });
const verifyExportQuery = z.strictObject({
  format: z.enum(EXPORT_FORMATS).optional(),
  /** `true`: the file should be an unfiltered range, so a missing row is a failure. */
  contiguous: z.enum(['true', 'false']).optional(),
});

/** Largest export file `POST /audit/verify-export` reads (it streams; this only bounds the work). */
export const MAX_VERIFY_UPLOAD = 2 * 1024 * 1024 * 1024;

type FilterQuery = z.output<z.ZodObject<typeof filterShape>>;

function toFilter(q: FilterQuery): AuditFilterInput {
  const { type, types, ...rest } = q;
  const all = [...(type === undefined ? [] : Array.isArray(type) ? type : [type]), ...(types ? types.split(',').map((t) => t.trim()).filter(Boolean) : [])];
  const f: AuditFilterInput = {};
  for (const [k, v] of Object.entries(rest)) if (v !== undefined) (f as Record<string, unknown>)[k] = v;
  if (all.length > 0) f.types = all;
  return f;
}

/**
 * The list's cursor rule (docs/protocol.md): `after` is the previous page's `next` in the list's own
 * order, so newest first it means "older than": an exclusive upper bound, like `before`. (The core
 * query, which the console also calls, keeps `after` as a lower id bound in both orders: its live
 * tail asks for the rows newer than the top of its list.)
 */
function listBounds(q: FilterQuery, order: 'asc' | 'desc' | undefined): FilterQuery {
  if (order !== 'desc' || q.after === undefined) return q;
  const { after, before, ...rest } = q;
  return { ...rest, before: Math.max(1, Math.min(after, before ?? Number.MAX_SAFE_INTEGER)) };
}

export function auditRoutes(core: Core): Route[] {
  return [
    {
      ...withDoc(opRoute('audit.query'), { query: listQuery }),
      handler(c) {
        const { limit, order, ...rest } = parseQuery(listQuery, c);
        return ok(core.auditQuery.query({ ...toFilter(listBounds(rest, order)), ...(limit ? { limit } : {}), ...(order ? { order } : {}) }));
      },
    },
    {
      ...withDoc(opRoute('audit.count'), { query: countQuery }),
      handler(c) {
        return ok(core.auditQuery.count(toFilter(parseQuery(countQuery, c))));
      },
    },
    {
      ...withDoc(opRoute('audit.export'), { query: exportQuery }),
      async handler(c): Promise<typeof STREAMED> {
        const { format = 'jsonl', ...rest } = parseQuery(exportQuery, c);
        // Validates the filter before anything is written: bad input is still a plain 400. The rows
        // are read and serialised off this thread (core/audit/export-thread.ts): a claim arriving
        // meanwhile waits for a socket write at most, and a slow reader pauses the reading.
        const chunks = core.auditExport.stream(toFilter(rest), { format });
        const stamp = new Date(core.clock.now()).toISOString().replace(/[:.]/g, '-');
        c.res.writeHead(200, {
          'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
          'content-disposition': `attachment; filename="gaffer-audit-${stamp}.${format}"`,
          'cache-control': 'no-store',
          'x-content-type-options': 'nosniff',
        });
        await streamChunks(c.res, chunks);
        return STREAMED;
      },
    },
    {
      ...withDoc(opRoute('audit.verify'), { query: verifyQuery }),
      async handler(c) {
        return ok(await core.verifyAudit(parseQuery(verifyQuery, c)));
      },
    },
    {
      // The body is an exported file (JSONL or CSV), streamed: nothing is buffered whole.
      ...withDoc(opRoute('audit.verifyExport'), {
        query: verifyExportQuery,
        rawBody: { mediaType: 'application/octet-stream', description: 'an export made by GET /audit/export (JSON lines or CSV, as `format` says)' },
      }),
      async handler(c) {
        const { format = 'jsonl', contiguous } = parseQuery(verifyExportQuery, c);
        const file = cappedBody(c.req, {
          maxBytes: MAX_VERIFY_UPLOAD,
          tooLarge: `export file larger than ${MAX_VERIFY_UPLOAD} bytes`,
          incomplete: 'the uploaded file was not received completely',
        });
        return ok(await verifyExport(file, format, { expectContiguous: contiguous === 'true' }));
      },
    },
  ];
}
