import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { EXPORT_PAGE_ROWS, exportAudit, verifyExport } from './audit-export';
import { AuditExporter, EXPORT_SLOT_BYTES } from './export-thread';

let core: TestCore;
beforeEach(() => {
  core = makeTestCore();
});
afterEach(() => core.close());

function seed(n: number): void {
  core.store.write(() => {
    for (let i = 1; i <= n; i++) {
      core.audit.record({
        type: i % 3 === 0 ? 'x.special' : 'x.plain',
        actor: i % 2 ? 'op,"er' : 'agent',
        subject: `task:${i}`,
        detail: { i, text: i % 5 === 0 ? 'line\nbreak, "quoted" ✓ \u2028' : 'plain' },
        traceId: i % 4 === 0 ? `trace-${i}` : null,
      });
      core.clock.advance(10);
    }
  });
}

const decoder = () => {
  const d = new TextDecoder();
  return (c: string | Uint8Array) => (typeof c === 'string' ? c : d.decode(c, { stream: true }));
};

async function text(chunks: AsyncIterable<string | Uint8Array>): Promise<string> {
  const dec = decoder();
  let out = '';
  for await (const c of chunks) out += dec(c);
  return out;
}

describe('the audit export off the main thread', () => {
  // One worker start for all of it: from the sources each start loads tsx and the modules anew.
  it('runs in a worker, at most `window` chunks ahead of the consumer, as a snapshot, writing exactly what exportAudit writes', async () => {
    seed(10 * EXPORT_PAGE_ROWS);
    // Two rows whose page is too large for a slot of the worker's ring: sent as a buffer of its own.
    core.store.write(() => {
      for (let i = 0; i < 2; i++) core.audit.record({ type: 'x.special', actor: 'op', subject: `big:${i}`, detail: { text: `é${'x'.repeat(EXPORT_SLOT_BYTES / 2)}` } });
    });
    const filter = { type: 'x.special', after: 50 };
    const expected = await text(exportAudit(core.auditQuery, filter, { format: 'csv' }));
    const stalls: number[] = [];
    let stalled!: () => void;
    const firstStall = new Promise<void>((r) => (stalled = r));
    const chunks = core.auditExport.stream(filter, { format: 'csv', window: 2, onStall: (sent) => (stalls.push(sent), stalled()) });
    seed(EXPORT_PAGE_ROWS); // committed after the call: not in the export
    // Nothing pulled yet: the worker sends its window and waits (without flow control it would
    // run to the end and never wait).
    await firstStall;
    expect(stalls).toEqual([2]);
    // Bytes, not text: encoded in the worker straight into its ring (shared memory), so the main
    // thread adopts no new buffer per chunk. A chunk is valid until the next pull: decoded at once.
    const dec = decoder();
    let all = '';
    const kinds: string[] = [];
    for await (const c of chunks) {
      kinds.push(c instanceof Uint8Array ? (c.buffer instanceof SharedArrayBuffer ? 'ring' : 'own') : 'text');
      all += dec(c);
    }
    expect(kinds.length).toBeGreaterThan(3);
    expect(kinds.slice(0, -1).every((k) => k === 'ring')).toBe(true);
    expect(kinds.at(-1)).toBe('own'); // the last page: the two large rows, whole
    expect(all).toBe(expected);
    expect((await verifyExport([all], 'csv')).ok).toBe(true);
  });

  it('reads pages of pageRows and sleeps pauseMs after each, still sending chunks of EXPORT_PAGE_ROWS rows', async () => {
    seed(2 * EXPORT_PAGE_ROWS + 10);
    const exporter = new AuditExporter(core.auditQuery, { dbPath: path.join(core.dir, 'gaffer.db'), pageRows: EXPORT_PAGE_ROWS / 4, pauseMs: 30, minRowsPerS: 0 });
    const dec = decoder();
    const lines: number[] = [];
    let all = '';
    let first = 0;
    for await (const c of exporter.stream({}, { format: 'jsonl' })) {
      first ||= performance.now(); // the worker's start-up is not what is measured
      const text = dec(c);
      lines.push(text.split('\n').length - 1);
      all += text;
    }
    const ms = performance.now() - first;
    // 9 pages of 50 rows, a pause after each: the 4 pages of the second chunk and the 1 of the third at least come after the first chunk.
    expect(ms).toBeGreaterThanOrEqual(5 * 30 - 5);
    expect(lines).toEqual([EXPORT_PAGE_ROWS, EXPORT_PAGE_ROWS, 10]);
    expect(all).toBe(await text(exportAudit(core.auditQuery, {}, { format: 'jsonl' })));
  });

  it('stops pausing while the export runs slower than minRowsPerS (the bound on the cost of pacing)', async () => {
    seed(2 * EXPORT_PAGE_ROWS + 10);
    // 9 pages, 400 ms after each; the first chunk goes after the 4th page. Paced all the way, 6 pauses
    // (2.4 s) follow it. The rate is first measured at the 4th page (1.2 s in, ~170 rows/s, below the
    // floor), so pacing stops there and no pause follows the first chunk: the rest is the worker's
    // own work (a bound with room for a loaded machine, far from the paced 2.4 s).
    const exporter = new AuditExporter(core.auditQuery, { dbPath: path.join(core.dir, 'gaffer.db'), pageRows: EXPORT_PAGE_ROWS / 4, pauseMs: 400, minRowsPerS: 1e9 });
    let first = 0;
    for await (const c of exporter.stream({}, { format: 'jsonl' })) {
      expect(c).toBeInstanceOf(Uint8Array);
      first ||= performance.now();
    }
    expect(performance.now() - first).toBeLessThan(1200);
  });

  it('refuses a bad filter before starting a worker', () => {
    expect(() => core.auditExport.stream({ limit: 5 }, { format: 'jsonl' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => core.auditExport.stream({ from: 'soon' }, { format: 'csv' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
    expect(() => core.auditExport.stream({ from: '2026-12-02T00:00:00Z', to: '2026-12-01T00:00:00Z' }, { format: 'csv' })).toThrow(expect.objectContaining({ code: 'bad_request' }));
  });

  it('runs in this thread for an in-memory database', async () => {
    seed(3);
    const exporter = new AuditExporter(core.auditQuery, { dbPath: ':memory:' });
    const chunks: Array<string | Uint8Array> = [];
    for await (const c of exporter.stream({}, { format: 'csv' })) chunks.push(c);
    expect(chunks.every((c) => typeof c === 'string')).toBe(true);
    expect(chunks.join('')).toBe(await text(exportAudit(core.auditQuery, {}, { format: 'csv' })));
  });
});
