/**
 * Console audit export, shared by both shells: the browser downloads it over HTTP
 * (`GET /console/export`), Electron streams it to the file picked in a native save dialog.
 * The rows come from the core's audit exporter (`exportAudit` in a worker thread, so an export does
 * not hold up agents' claims: bounded memory, a snapshot, verifiable rows).
 */
import { auditExportArgs } from '../../common/console-api';
import { GafferError } from '../../common/errors';
import { parseOrThrow } from '../../common/validate';
import type { ExportFormat } from '../../core/audit/audit-export';
import type { Core } from '../../core/create-core';

export interface ConsoleExport {
  format: ExportFormat;
  /** A suggested file name: `gaffer-audit-<UTC stamp>.<format>`. */
  filename: string;
  contentType: string;
  /** Text chunks, each a whole number of rows (CSV: the header first). */
  chunks: AsyncGenerator<string, void, undefined>;
}

export function exportFilename(now: number, format: ExportFormat): string {
  return `gaffer-audit-${new Date(now).toISOString().replace(/[:.]/g, '-')}.${format}`;
}

/** Validates the arguments (bad input → `bad_request` before anything is produced) and starts the export. */
export function startConsoleExport(core: Pick<Core, 'auditExport' | 'clock'>, input: unknown): ConsoleExport {
  const { format, ...filter } = parseOrThrow(auditExportArgs, input, 'export arguments');
  return {
    format,
    filename: exportFilename(core.clock.now(), format),
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    chunks: asText(core.auditExport.stream(filter, { format })),
  };
}

/** The worker's UTF-8 bytes as text (each chunk is whole rows; the decoder streams anyway). */
async function* asText(chunks: AsyncGenerator<string | Uint8Array, void, undefined>): AsyncGenerator<string, void, undefined> {
  const decoder = new TextDecoder();
  try {
    for await (const c of chunks) yield typeof c === 'string' ? c : decoder.decode(c, { stream: true });
  } finally {
    await chunks.return(undefined); // a consumer that stops early ends the worker
  }
}

/**
 * Rows in one chunk. JSONL: one row per `\n` (JSON escapes newlines inside values). CSV: one
 * record per CRLF, minus the header (which `isFirst` marks); a CRLF inside a quoted field would
 * overcount, and none of the exported fields carries one in practice.
 */
export function rowsInChunk(chunk: string, format: ExportFormat, isFirst: boolean): number {
  let n = 0;
  const sep = format === 'csv' ? '\r\n' : '\n';
  for (let i = chunk.indexOf(sep); i >= 0; i = chunk.indexOf(sep, i + sep.length)) n++;
  return format === 'csv' && isFirst ? Math.max(0, n - 1) : n;
}

const INSTANT = /^\d{1,16}$/;

/**
 * Turns the query string of `GET /console/export` into `AuditExportArgs` input (still to be
 * validated): repeated `type=` or `types=a,b` for several types; ids and epoch-ms instants as
 * numbers. Unknown parameters are kept so that validation refuses them.
 */
export function exportArgsFromQuery(search: Iterable<[string, string]>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const types: string[] = [];
  for (const [k, v] of search) {
    if (k === 'type' || k === 'types') {
      types.push(...v.split(',').map((t) => t.trim()).filter(Boolean));
      continue;
    }
    if (k in out) throw new GafferError('bad_request', `query parameter "${k}" is repeated`);
    if (k === 'after' || k === 'before') out[k] = INSTANT.test(v) ? Number(v) : v;
    else if ((k === 'from' || k === 'to') && INSTANT.test(v)) out[k] = Number(v);
    else out[k] = v;
  }
  if (types.length === 1) out.type = types[0];
  else if (types.length > 1) out.types = types;
  if (out.format === undefined) out.format = 'jsonl';
  return out;
}
