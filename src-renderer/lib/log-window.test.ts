import { describe, expect, it } from 'vitest';
import type { LogLine } from '../../src-main/common/logs';
import { LogWindow } from './log-window';

const line = (seq: number): LogLine => ({ seq, at: '2026-12-01T00:00:00.000Z', attempt: 1, stream: 'stdout', level: 'info', text: `l${seq}` });
const settle = () => new Promise((r) => setTimeout(r, 0));

function source(lastSeq: { v: number }) {
  const calls: Array<[number, number]> = [];
  const load = async (after: number, limit: number) => {
    calls.push([after, limit]);
    const out: LogLine[] = [];
    for (let s = after + 1; s <= Math.min(lastSeq.v, after + limit); s++) out.push(line(s));
    return out;
  };
  return { calls, load };
}

describe('LogWindow', () => {
  it('loads only the pages in view, once each, and maps rows to seqs', async () => {
    const last = { v: 1_000_100 };
    const src = source(last);
    let changes = 0;
    const w = new LogWindow({ pageSize: 100, onChange: () => changes++ });
    w.reset(101, 1_000_000, src.load); // the attempt is seqs 101 … 1 000 100
    w.ensure(500_000, 500_050);
    w.ensure(500_010, 500_060); // same pages: no new request
    await settle();
    expect(src.calls).toEqual([[500_100, 100]]);
    expect(w.row(500_000)?.seq).toBe(500_101);
    expect(w.row(0)).toBeUndefined();
    expect(w.rowOfSeq(101)).toBe(0);
    expect(changes).toBe(1);
  });

  it('keeps at most maxPages pages, dropping the least recently used', async () => {
    const src = source({ v: 100_000 });
    const w = new LogWindow({ pageSize: 10, maxPages: 3, onChange: () => {} });
    w.reset(1, 100_000, src.load);
    for (const at of [0, 10, 20]) {
      w.ensure(at, at + 5);
      await settle();
    }
    w.row(0); // page 0 used again
    w.ensure(30, 35);
    await settle();
    expect(w.held).toBe(3);
    expect(w.row(0)?.seq).toBe(1);
    expect(w.row(10)).toBeUndefined(); // page 1 was the oldest
  });

  it('refetches a partial last page when the live attempt grows, and drops answers for a replaced window', async () => {
    const last = { v: 15 };
    const src = source(last);
    const w = new LogWindow({ pageSize: 10, onChange: () => {} });
    w.reset(1, 15, src.load);
    w.ensure(0, 14);
    await settle();
    expect(w.row(14)?.seq).toBe(15);
    last.v = 18;
    w.setCount(18);
    w.ensure(10, 17);
    await settle();
    expect(w.row(17)?.seq).toBe(18);
    expect(src.calls.filter(([after]) => after === 10)).toHaveLength(2);

    w.ensure(0, 5); // cached
    const slow = new LogWindow({ pageSize: 10, onChange: () => {} });
    slow.reset(1, 15, src.load);
    slow.ensure(0, 5);
    slow.reset(1, 0, src.load); // another attempt before the answer came
    await settle();
    expect(slow.row(0)).toBeUndefined();
  });
});
