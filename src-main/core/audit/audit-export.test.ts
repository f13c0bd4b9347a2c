import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../common/model';
import { makeTestCore, type TestCore } from '../tests/test-core';
import {
  CSV_COLUMNS,
  csvField,
  csvRecord,
  csvRecords,
  EXPORT_PAGE_ROWS,
  exportAudit,
  verifyExport,
  verifyLiveRange,
  type ExportFormat,
} from './audit-export';

let core: TestCore;
beforeEach(() => {
  core = makeTestCore();
});
afterEach(() => core.close());

const TRICKY = [
  'comma, inside',
  'a "quoted" word',
  'line\nbreak and\r\ncrlf',
  '',
  'unicode: 日本語 ✓ \u2028',
  '=SUM(A1)',
];

function seed(n: number): void {
  for (let i = 1; i <= n; i++) {
    core.audit.record({
      type: i % 3 === 0 ? 'x.special' : 'x.plain',
      actor: i % 2 ? 'op,"er' : 'agent',
      subject: `task:${i}`,
      detail: { i, text: TRICKY[i % TRICKY.length], nested: { list: [1, null, true], big: 1e21, neg: -0.5 } },
      traceId: i === 2 ? '' : i % 4 === 0 ? `trace-${i}` : null,
    });
    core.clock.advance(10);
  }
}

async function collect(filter: Record<string, unknown>, format: ExportFormat, pageSize?: number): Promise<string> {
  let out = '';
  for await (const chunk of exportAudit(core.auditQuery, filter, { format, ...(pageSize ? { pageSize } : {}) })) out += chunk;
  return out;
}

async function* source(text: string, chunk = 7): AsyncGenerator<string> {
  // Small chunks: records and multi-byte characters straddle chunk boundaries.
  for (let i = 0; i < text.length; i += chunk) yield text.slice(i, i + chunk);
}

function allEvents(): AuditEvent[] {
  return core.auditQuery.query({ limit: 1000 }).items;
}

describe('CSV encoding', () => {
  it('quotes only what needs quoting, doubles quotes, keeps null and "" apart', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('cr\r')).toBe('"cr\r"');
    expect(csvField('')).toBe('""');
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvRecord(['a', null, '', 'b,c'])).toBe('a,,"","b,c"\r\n');
  });

  it('parses back what it writes, across chunk boundaries', async () => {
    const rows = [['id', 'v'], ...TRICKY.map((t, i) => [String(i), t]), ['9', '']];
    const text = rows.map((r) => csvRecord(r)).join('') + csvRecord(['x', null]);
    const got: Array<{ fields: string[]; quoted: boolean[] }> = [];
    for await (const rec of csvRecords(source(text, 3))) got.push(rec);
    expect(got.map((r) => r.fields)).toEqual([...rows, ['x', '']]);
    expect(got[got.length - 1]!.quoted).toEqual([false, false]);
    expect(got[got.length - 2]!.quoted).toEqual([false, true]);
  });
});

describe('audit export', () => {
  it('JSONL lines are the events, detail byte-for-byte as stored', async () => {
    seed(12);
    const text = await collect({}, 'jsonl', 5);
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(12);
    expect(lines.map((l) => JSON.parse(l))).toEqual(allEvents());
    const stored = core.db.prepare('SELECT detail FROM audit WHERE id = 1').pluck().get() as string;
    expect(lines[0]).toContain(`"detail":${stored},`);
    expect(JSON.parse(lines[1]!).traceId).toBe('');
    expect(JSON.parse(lines[3]!).traceId).toBe('trace-4');
  });

  it('CSV has a header and one record per event, every field recoverable', async () => {
    seed(12);
    const text = await collect({}, 'csv', 4);
    const recs: string[][] = [];
    for await (const r of csvRecords(source(text))) recs.push(r.fields);
    expect(recs[0]).toEqual([...CSV_COLUMNS]);
    const events = allEvents();
    expect(recs.slice(1)).toEqual(
      events.map((e) => [String(e.id), e.at, e.type, e.actor, e.subject, JSON.stringify(e.detail), e.traceId ?? '', e.prevHash, e.hash]),
    );
  });

  it('applies filters and the cursor range', async () => {
    seed(12);
    const special = (await collect({ type: 'x.special' }, 'jsonl')).trimEnd().split('\n').map((l) => JSON.parse(l).id);
    expect(special).toEqual([3, 6, 9, 12]);
    const mid = (await collect({ after: 4, before: 8 }, 'jsonl')).trimEnd().split('\n').map((l) => JSON.parse(l).id);
    expect(mid).toEqual([5, 6, 7]);
    expect(await collect({ type: 'none' }, 'jsonl')).toBe('');
    expect(await collect({ type: 'none' }, 'csv')).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  it('gives the event loop a turn every EXPORT_PAGE_ROWS rows at most, whatever page size is asked (a claim waits behind one short page)', async () => {
    const total = EXPORT_PAGE_ROWS * 3 + 7;
    seed(total);
    for (const pageSize of [undefined, EXPORT_PAGE_ROWS * 10]) {
      let rows = 0;
      let rowsAtFirstTurn: number | undefined;
      setImmediate(() => (rowsAtFirstTurn = rows));
      const sizes: number[] = [];
      for await (const chunk of exportAudit(core.auditQuery, {}, { format: 'jsonl', ...(pageSize ? { pageSize } : {}) })) {
        sizes.push(chunk.split('\n').length - 1);
        rows += sizes[sizes.length - 1]!;
      }
      expect(rows).toBe(total);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(EXPORT_PAGE_ROWS);
      expect(rowsAtFirstTurn).toBeLessThanOrEqual(EXPORT_PAGE_ROWS);
    }
  });

  it('validates the filter before yielding anything', () => {
    expect(() => exportAudit(core.auditQuery, { limit: 5 }, { format: 'jsonl' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => exportAudit(core.auditQuery, { from: 'soon' }, { format: 'csv' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
  });

  it('is a snapshot: rows appended while exporting are not included', async () => {
    seed(10);
    const it = exportAudit(core.auditQuery, {}, { format: 'jsonl', pageSize: 3 });
    const first = await it.next();
    seed(5); // appended mid-export (and writes are not blocked by the export)
    let text = first.value as string;
    for await (const chunk of it) text += chunk;
    expect(text.trimEnd().split('\n').map((l) => JSON.parse(l).id)).toEqual(Array.from({ length: 10 }, (_, k) => k + 1));
  });
});

describe('export verification', () => {
  it('a contiguous export verifies every hash and link, anchored at genesis', async () => {
    seed(15);
    for (const format of ['jsonl', 'csv'] as const) {
      const r = await verifyExport(source(await collect({}, format)), format);
      expect(r).toMatchObject({ ok: true, format, rows: 15, firstId: 1, lastId: 15, coverage: 'chain', segments: 1, linksChecked: 14, anchoredAtGenesis: true });
      expect(r.summary).toMatch(/every row hash and every link verified/);
    }
    const mid = await verifyExport(source(await collect({ after: 5 }, 'jsonl')), 'jsonl');
    expect(mid).toMatchObject({ ok: true, coverage: 'chain', firstId: 6, anchoredAtGenesis: false, linksChecked: 9 });
  });

  it('a filtered export verifies each row and says that links were only checked within stretches', async () => {
    seed(15);
    const r = await verifyExport(source(await collect({ type: 'x.special' }, 'jsonl')), 'jsonl');
    expect(r).toMatchObject({ ok: true, rows: 5, coverage: 'rows', segments: 5, linksChecked: 0 });
    expect(r.summary).toMatch(/own hash verified/);
    const plain = await verifyExport(source(await collect({ type: 'x.plain' }, 'csv')), 'csv');
    expect(plain).toMatchObject({ ok: true, rows: 10, coverage: 'rows', segments: 5, linksChecked: 5 });
  });

  it('detects tampering in a copy (JSONL)', async () => {
    seed(15);
    const lines = (await collect({}, 'jsonl')).trimEnd().split('\n');
    const edit = (i: number, f: (e: Record<string, any>) => void) => {
      const copy = [...lines];
      const e = JSON.parse(copy[i]!);
      f(e);
      copy[i] = JSON.stringify(e);
      return copy.join('\n') + '\n';
    };
    // Altered content.
    let r = await verifyExport(source(edit(6, (e) => (e.detail.i = 999))), 'jsonl');
    expect(r).toMatchObject({ ok: false, brokenAt: 7, line: 7, reason: 'row content does not match its hash' });
    r = await verifyExport(source(edit(0, (e) => (e.actor = 'someone else'))), 'jsonl');
    expect(r).toMatchObject({ ok: false, brokenAt: 1 });
    r = await verifyExport(source(edit(9, (e) => (e.at = new Date(Date.parse(e.at) + 1).toISOString()))), 'jsonl');
    expect(r).toMatchObject({ ok: false, brokenAt: 10 });
    // Altered content with a recomputed hash: the next row's link catches it.
    const { rowHash } = await import('./hash-chain');
    r = await verifyExport(
      source(
        edit(4, (e) => {
          e.detail.i = 1234;
          e.hash = rowHash({ ...e, detail: JSON.stringify(e.detail) } as never);
        }),
      ),
      'jsonl',
    );
    expect(r).toMatchObject({ ok: false, brokenAt: 6, reason: 'link to the previous row broken' });
    // Reordered, duplicated, removed.
    const swapped = [...lines];
    [swapped[3], swapped[4]] = [swapped[4]!, swapped[3]!];
    expect(await verifyExport(source(swapped.join('\n')), 'jsonl')).toMatchObject({ ok: false, brokenAt: 4 });
    expect(await verifyExport(source([...lines.slice(0, 3), lines[2], ...lines.slice(3)].join('\n')), 'jsonl')).toMatchObject({
      ok: false,
      brokenAt: 3,
    });
    const removed = [...lines.slice(0, 7), ...lines.slice(8)].join('\n');
    expect(await verifyExport(source(removed), 'jsonl')).toMatchObject({ ok: true, coverage: 'rows', segments: 2 });
    expect(await verifyExport(source(removed), 'jsonl', { expectContiguous: true })).toMatchObject({
      ok: false,
      brokenAt: 8,
      reason: 'gap: row 8 missing',
    });
    // A forged first row claiming to be the genesis row.
    r = await verifyExport(source(edit(0, (e) => (e.prevHash = 'f'.repeat(64)))), 'jsonl');
    expect(r).toMatchObject({ ok: false, brokenAt: 1, reason: 'link to the previous row broken' });
    // Garbage.
    expect(await verifyExport(source(`${lines[0]}\nnot json\n`), 'jsonl')).toMatchObject({ ok: false, line: 2, reason: 'not valid JSON' });
    expect(await verifyExport(source('{"id":1}\n'), 'jsonl')).toMatchObject({ ok: false, line: 1, reason: 'bad "at"' });
  });

  it('detects tampering in a copy (CSV), including a file on disk', async () => {
    seed(8);
    const text = await collect({}, 'csv');
    const file = path.join(core.dir, 'export.csv');
    fs.writeFileSync(file, text);
    expect(await verifyExport(fs.createReadStream(file), 'csv')).toMatchObject({ ok: true, rows: 8, coverage: 'chain' });
    fs.writeFileSync(file, text.replace('task:5', 'task:6'));
    expect(await verifyExport(fs.createReadStream(file), 'csv')).toMatchObject({ ok: false, brokenAt: 5, line: 6 });
    // traceId null vs "" is part of the hash: an unquoted empty field means null.
    expect(text).toContain(',"",'); // row 2 has traceId ""
    const r = await verifyExport(source(text.replace(/,"",([0-9a-f]{64}),/, ',,$1,')), 'csv');
    expect(r).toMatchObject({ ok: false, brokenAt: 2 });
    expect(await verifyExport(source('id,at\r\n'), 'csv')).toMatchObject({ ok: false, line: 1 });
  });
});

describe('live chain verification', () => {
  it('verifies a range in chunks, anchored at genesis or at the row before', async () => {
    seed(25);
    expect(await verifyLiveRange(core.db, {}, 4)).toEqual({ ok: true, checked: 25, firstId: 1, lastId: 25, anchor: 'genesis' });
    expect(await verifyLiveRange(core.db, { after: 10, before: 20 }, 4)).toEqual({ ok: true, checked: 9, firstId: 11, lastId: 19, anchor: 'previous_row' });
    expect(await verifyLiveRange(core.db, { after: 30 })).toMatchObject({ ok: true, checked: 0, anchor: 'none' });
    // Tamper with the live table (the append-only trigger has to be dropped first).
    core.db.exec('DROP TRIGGER audit_no_update');
    core.db.prepare(`UPDATE audit SET detail = '{"forged":true}' WHERE id = 17`).run();
    expect(await verifyLiveRange(core.db, {}, 4)).toMatchObject({ ok: false, checked: 25, brokenAt: 17, problemCount: 1, problems: [{ id: 17, kind: 'content' }] });
    expect(await verifyLiveRange(core.db, { after: 17 })).toMatchObject({ ok: true, checked: 8 });
  });
});
