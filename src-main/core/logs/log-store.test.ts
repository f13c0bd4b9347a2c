import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LOG_SETTINGS, type LogSettings } from '../../common/logs';
import { cutUtf8, ftsQuery, LogStore, plainText, type IncomingLine } from './log-store';
import Database from 'better-sqlite3';
import { Segment, segmentFile } from './segment-store';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-logs-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const S: LogSettings = { ...DEFAULT_LOG_SETTINGS };
const lines = (n: number, from = 1, extra: Partial<IncomingLine> = {}): IncomingLine[] =>
  Array.from({ length: n }, (_, i) => ({ text: `line ${from + i}`, at: T0 + i, seq: from + i, ...extra }));

describe('LogStore', () => {
  it('stores lines in order with dense seqs across attempts, and pages them with after', () => {
    const store = new LogStore(tempDir(), T0);
    store.append([{ subject: 'task:1', attempt: 1, lines: lines(5) }], T0, S);
    store.append([{ subject: 'task:1', attempt: 2, lines: lines(3) }], T0, S);
    const first = store.read({ subject: 'task:1', limit: 4 });
    expect(first.items.map((l) => [l.seq, l.attempt, l.text])).toEqual([
      [1, 1, 'line 1'],
      [2, 1, 'line 2'],
      [3, 1, 'line 3'],
      [4, 1, 'line 4'],
    ]);
    expect(first.next).toBe(4);
    const rest = store.read({ subject: 'task:1', after: 4, limit: 100 });
    expect(rest.items.map((l) => l.seq)).toEqual([5, 6, 7, 8]);
    expect(rest.next).toBeNull();
    expect(store.read({ subject: 'task:1', attempt: 2, limit: 100 }).items.map((l) => l.text)).toEqual(['line 1', 'line 2', 'line 3']);
    expect(store.attemptsOf('task:1').map((a) => [a.attempt, a.lines, a.firstSeq, a.lastSeq])).toEqual([
      [1, 5, 1, 5],
      [2, 3, 6, 8],
    ]);
    store.close();
  });

  it('drops resent lines by their client seq, also after reopening the files', () => {
    const dir = tempDir();
    let store = new LogStore(dir, T0);
    const [a] = store.append([{ subject: 'run:r1', attempt: 1, lines: lines(10) }], T0, S);
    expect(a).toMatchObject({ ok: true, stored: 10, duplicates: 0, clientSeq: 10 });
    store.close();
    store = new LogStore(dir, T0);
    // The SDK resends 6..12 after a reconnect: 6..10 were stored already.
    const [b] = store.append([{ subject: 'run:r1', attempt: 1, lines: lines(7, 6) }], T0, S);
    expect(b).toMatchObject({ ok: true, stored: 2, duplicates: 5, clientSeq: 12 });
    expect(store.read({ subject: 'run:r1', limit: 100 }).items.map((l) => l.text)).toEqual(lines(12).map((l) => l.text));
    store.close();
  });

  it('keeps colour codes, splits on newlines and cuts an over-long line at a character boundary with its full size', () => {
    const store = new LogStore(tempDir(), T0);
    const long = 'é'.repeat(400); // 800 bytes
    store.append([{ subject: 'task:2', attempt: 1, lines: [{ text: '\x1b[31mred\x1b[0m\nsecond\n', at: T0 }, { text: long, at: T0, stream: 'stderr', level: 'error' }] }], T0, { ...S, maxLineBytes: 301 });
    const items = store.read({ subject: 'task:2', limit: 10 }).items;
    expect(items.map((l) => l.text.length)).toEqual([12, 6, 150]);
    expect(items[0]!.text).toBe('\x1b[31mred\x1b[0m');
    expect(items[2]).toMatchObject({ stream: 'stderr', level: 'error', cutFrom: 800 });
    expect(cutUtf8('aé', 2)).toBe('a');
    store.close();
  });

  it('refuses an entry with a lone surrogate whole and stores its neighbours', () => {
    const store = new LogStore(tempDir(), T0);
    const out = store.append(
      [
        { subject: 'task:3', attempt: 1, lines: [{ text: 'fine', at: T0 }, { text: 'bad \ud800', at: T0 }] },
        { subject: 'task:4', attempt: 1, lines: [{ text: 'other', at: T0 }] },
      ],
      T0,
      S,
    );
    expect(out[0]).toEqual({ ok: false, field: 'lines[1].text', message: expect.stringContaining('lone surrogate') });
    expect(out[1]).toMatchObject({ ok: true, stored: 1 });
    expect(store.read({ subject: 'task:3', limit: 10 }).items).toEqual([]);
    store.close();
  });

  it('stores one truncation marker at the cap and counts the rest as dropped', () => {
    const store = new LogStore(tempDir(), T0);
    const capped = { ...S, maxLinesPerAttempt: 5 };
    store.append([{ subject: 'task:5', attempt: 1, lines: lines(3) }], T0, capped);
    const [out] = store.append([{ subject: 'task:5', attempt: 1, lines: lines(10, 4) }], T0, capped);
    expect(out).toMatchObject({ ok: true, stored: 2, dropped: 9, truncated: true, clientSeq: 13 });
    const items = store.read({ subject: 'task:5', limit: 100 }).items;
    expect(items).toHaveLength(5);
    expect(items.filter((l) => l.marker === 'truncated')).toHaveLength(1);
    expect(items[4]).toMatchObject({ marker: 'truncated', stream: 'agent', level: 'warn' });
    expect(store.attemptsOf('task:5')[0]).toMatchObject({ truncated: true, dropped: 9, lines: 5 });
    // A new attempt starts with its own cap.
    expect(store.append([{ subject: 'task:5', attempt: 2, lines: lines(2) }], T0, capped)[0]).toMatchObject({ stored: 2, truncated: false });
    store.close();
  });

  it('filters by stream and substring (case-insensitive, LIKE characters literal)', () => {
    const store = new LogStore(tempDir(), T0);
    store.append(
      [
        {
          subject: 'task:6',
          attempt: 1,
          lines: [
            { text: 'Error: 100% done_x', at: T0, stream: 'stderr' },
            { text: 'all good', at: T0 },
            { text: 'error again', at: T0, stream: 'stderr' },
            { text: '100 items', at: T0 },
          ],
        },
      ],
      T0,
      S,
    );
    expect(store.read({ subject: 'task:6', limit: 10, stream: 'stderr' }).items.map((l) => l.seq)).toEqual([1, 3]);
    expect(store.read({ subject: 'task:6', limit: 10, contains: 'ERROR' }).items.map((l) => l.seq)).toEqual([1, 3]);
    expect(store.read({ subject: 'task:6', limit: 10, contains: '100%' }).items.map((l) => l.seq)).toEqual([1]);
    expect(store.read({ subject: 'task:6', limit: 10, contains: 'e_x' }).items.map((l) => l.seq)).toEqual([1]);
    expect(store.read({ subject: 'task:6', limit: 10, contains: 'o_e' }).items).toEqual([]);
    store.close();
  });

  it('rotates segments, reads a subject across them, and sweeps whole old segments by age and size', () => {
    const dir = tempDir();
    const day = 24 * 3600 * 1000;
    const store = new LogStore(dir, T0, { segmentMaxAgeMs: day });
    store.append([{ subject: 'task:7', attempt: 1, lines: lines(3) }], T0, S);
    store.append([{ subject: 'task:7', attempt: 1, lines: lines(3, 4) }], T0 + day, S); // new segment
    store.append([{ subject: 'task:8', attempt: 1, lines: lines(2) }], T0 + 2 * day, S); // and another
    expect(store.stats().segments).toBe(3);
    expect(store.read({ subject: 'task:7', limit: 100 }).items.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(store.read({ subject: 'task:7', after: 2, limit: 2 })).toMatchObject({ items: [{ seq: 3 }, { seq: 4 }], next: 4 });
    // Age: the first segment's last line is older than 1.5 days at T0 + 2.5 days.
    expect(store.sweep(T0 + 2.5 * day, { retentionDays: 1.5, maxTotalMb: 1e6 })).toEqual({ removed: 1 });
    expect(store.read({ subject: 'task:7', limit: 100 }).items.map((l) => l.seq)).toEqual([4, 5, 6]);
    expect(fs.readdirSync(dir).filter((f) => f.endsWith('.db'))).toEqual(['seg-000002.db', 'seg-000003.db']);
    // Size: everything but the newest goes while over the cap; the newest is never removed.
    expect(store.sweep(T0 + 2.5 * day, { retentionDays: 100, maxTotalMb: 0 })).toEqual({ removed: 1 });
    expect(store.read({ subject: 'task:7', limit: 100 }).items).toEqual([]);
    expect(store.attemptsOf('task:7')).toEqual([]);
    expect(store.read({ subject: 'task:8', limit: 100 }).items).toHaveLength(2);
    store.close();
  });

  it('keeps the total on disk within maxTotalMb as lines are written: the oldest segments go at once, never the newest', () => {
    const dir = tempDir();
    const store = new LogStore(dir, T0);
    const cap: LogSettings = { ...S, maxTotalMb: 2 };
    const onDisk = () => fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
    const text = 'x'.repeat(2000);
    let most = 0;
    for (let b = 0; b < 24; b++) {
      // 24 batches of ~200 KiB (4.8 MiB in all) from one flooding attempt.
      const flood = Array.from({ length: 100 }, (_, i) => ({ text, at: T0, seq: b * 100 + i + 1 }));
      const [r] = store.append([{ subject: 'task:1', attempt: 1, lines: flood }], T0, cap);
      expect(r).toMatchObject({ ok: true, stored: 100 });
      most = Math.max(most, onDisk());
      expect(store.stats().bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    }
    expect(most).toBeLessThanOrEqual(2 * 1024 * 1024);
    expect(store.evicted).toBeGreaterThan(0);
    // The newest lines are there, the oldest went with their segments.
    const page = store.read({ subject: 'task:1', after: 2390, limit: 100 });
    expect(page.items.map((l) => l.seq)).toEqual(Array.from({ length: 10 }, (_, i) => 2391 + i));
    expect(store.read({ subject: 'task:1', limit: 1 }).items[0]!.seq).toBeGreaterThan(1000);
    // The word index takes room too: filling it keeps the total as well.
    store.indexSome(1e6);
    expect(onDisk()).toBeLessThanOrEqual(2 * 1024 * 1024);
    store.close();
  });

  it('finds words across logs once indexed, ignoring colour codes', () => {
    const store = new LogStore(tempDir(), T0);
    store.append([{ subject: 'task:9', attempt: 1, lines: [{ text: '\x1b[31mdeploy failed\x1b[0m', at: T0 }, { text: 'ok', at: T0 }] }], T0, S);
    store.append([{ subject: 'run:x', attempt: 1, lines: [{ text: 'deployment started', at: T0 }] }], T0, S);
    expect(store.search('deploy', 10)).toEqual([]); // not indexed yet
    expect(store.indexSome(1000)).toBe(3);
    expect(store.indexSome(1000)).toBe(0);
    expect(store.search('deploy', 10).map((h) => [h.subject, h.seq]).sort()).toEqual([
      ['run:x', 1],
      ['task:9', 1],
    ]);
    expect(store.search('deploy fail', 10).map((h) => h.subject)).toEqual(['task:9']);
    expect(ftsQuery('"; DROP')).toBe('"DROP"*');
    expect(plainText('\x1b[1;32mgreen\x1b[0m')).toBe('green');
    store.close();
  });

  it('a batch that fails stores nothing and changes no counter (the next one continues cleanly)', () => {
    const store = new LogStore(tempDir(), T0);
    store.append([{ subject: 'task:1', attempt: 1, lines: lines(3) }], T0, S);
    const real = Segment.prototype.insertLine;
    let n = 0;
    Segment.prototype.insertLine = function (this: Segment, ...args: Parameters<typeof real>) {
      if (++n === 4) throw new Error('disk full (simulated)');
      return real.apply(this, args);
    };
    try {
      expect(() => store.append([{ subject: 'task:1', attempt: 1, lines: lines(3, 4) }, { subject: 'task:2', attempt: 1, lines: lines(5) }], T0, S)).toThrow('disk full');
    } finally {
      Segment.prototype.insertLine = real;
    }
    expect(store.attemptsOf('task:2')).toEqual([]);
    expect(store.attemptsOf('task:1')[0]).toMatchObject({ lines: 3, lastSeq: 3 });
    // The resend after the failure stores everything once, with dense seqs.
    store.append([{ subject: 'task:1', attempt: 1, lines: lines(3, 4) }, { subject: 'task:2', attempt: 1, lines: lines(5) }], T0, S);
    expect(store.read({ subject: 'task:1', limit: 100 }).items.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(store.read({ subject: 'task:2', limit: 100 }).items.map((l) => l.seq)).toEqual([1, 2, 3, 4, 5]);
    store.close();
  });

  it('moves an unreadable segment aside and keeps working', () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'seg-000001.db'), 'not a database at all, just text'.repeat(200));
    const bad: string[] = [];
    const store = new LogStore(dir, T0, { onBadSegment: (f) => bad.push(path.basename(f)) });
    expect(bad).toEqual(['seg-000001.db.unreadable']);
    expect(store.append([{ subject: 'task:1', attempt: 1, lines: lines(1) }], T0, S)[0]).toMatchObject({ ok: true, stored: 1 });
    store.close();
  });

  it('keeps a line\'s conversation kind and data (PROTOCOL §16): data on the first piece, the kind on every piece', () => {
    const dir = tempDir();
    let store = new LogStore(dir, T0);
    const data = { model: 'claude-x', usage: { inputTokens: 3, outputTokens: 5 } };
    store.append(
      [
        {
          subject: 'task:7',
          attempt: 1,
          lines: [
            { text: 'plain', at: T0 },
            { text: 'first\nsecond', at: T0, kind: 'assistant', data },
            { text: 'ls', at: T0, stream: 'stderr', level: 'warn', kind: 'tool_call', data: { name: 'Bash', input: { command: 'ls' } } },
          ],
        },
      ],
      T0,
      S,
    );
    store.close();
    store = new LogStore(dir, T0); // read back from the file, not memory
    const items = store.read({ subject: 'task:7', limit: 10 }).items;
    expect(items.map((l) => [l.text, l.kind, l.data, l.stream, l.level])).toEqual([
      ['plain', undefined, undefined, 'stdout', 'info'],
      ['first', 'assistant', data, 'stdout', 'info'],
      ['second', 'assistant', undefined, 'stdout', 'info'],
      ['ls', 'tool_call', { name: 'Bash', input: { command: 'ls' } }, 'stderr', 'warn'],
    ]);
    // The stream filter still reads the stream out of the packed integer.
    expect(store.read({ subject: 'task:7', limit: 10, stream: 'stderr' }).items.map((l) => l.text)).toEqual(['ls']);
    // The data counts toward the attempt's bytes.
    expect(store.attemptsOf('task:7')[0]!.bytes).toBeGreaterThan(JSON.stringify(data).length);
    store.close();
  });

  it('opens a segment written before lines had data, and appends to it', () => {
    const dir = tempDir();
    const db = new Database(segmentFile(dir, 1));
    db.exec('CREATE TABLE lines (id INTEGER PRIMARY KEY, attempt INTEGER NOT NULL, at INTEGER NOT NULL, kind INTEGER NOT NULL, text TEXT NOT NULL, cut INTEGER)');
    db.close();
    const store = new LogStore(dir, T0);
    store.append([{ subject: 'task:1', attempt: 1, lines: [{ text: 'hi', at: T0, kind: 'result', data: { isError: false } }] }], T0, S);
    expect(store.read({ subject: 'task:1', limit: 10 }).items).toMatchObject([{ text: 'hi', kind: 'result', data: { isError: false } }]);
    store.close();
  });
});
