import { describe, expect, it } from 'vitest';
import { IngestQueue, isIngestFrame, type IngestSource } from './ingest-queue';

/** A queue on a manual clock and a manual scheduler: `turn()` runs one scheduled slice. */
function setup(opts: { sliceMs?: number; sliceBytes?: number; highWaterBytes?: number; lowWaterBytes?: number; yieldTo?: () => boolean } = {}) {
  let t = 0;
  const turns: Array<() => void> = [];
  const q = new IngestQueue({ ...opts, now: () => t, schedule: (fn) => turns.push(fn) });
  const ran: string[] = [];
  /** An item that takes `ms` of the clock. */
  const item = (name: string, ms = 1) => () => {
    ran.push(name);
    t += ms;
  };
  const turn = () => {
    const fn = turns.shift();
    if (!fn) throw new Error('nothing scheduled');
    fn();
  };
  const source = (name: string) => {
    const log: string[] = [];
    const s: IngestSource & { log: string[] } = { log, pause: () => log.push(`${name} paused`), resume: () => log.push(`${name} resumed`) };
    return s;
  };
  return { q, ran, item, turn, turns, source };
}

describe('IngestQueue', () => {
  it('runs items in slices bounded by time, yielding between them, in push order', () => {
    const { q, ran, item, turn, turns, source } = setup({ sliceMs: 2 });
    const a = source('a');
    const b = source('b');
    for (let i = 0; i < 5; i++) q.push(i % 2 ? b : a, 10, item(`f${i}`, 1));
    expect(ran).toEqual([]); // nothing runs where it is pushed
    turn();
    expect(ran).toEqual(['f0', 'f1']); // 2 ms of items, then the slice yields
    expect(turns).toHaveLength(1); // the rest is scheduled for a later turn
    turn();
    expect(ran).toEqual(['f0', 'f1', 'f2', 'f3']);
    turn();
    expect(ran).toEqual(['f0', 'f1', 'f2', 'f3', 'f4']);
    expect(turns).toHaveLength(0);
    expect(q.stats).toMatchObject({ items: 5, slices: 3 });
  });

  it('a slice steps aside once for the claims\' commit waiting behind it, never twice in a row', () => {
    let commits = 0; // ops waiting on the group commit, scheduled like the slices
    const { q, ran, item, turn, turns, source } = setup({ sliceMs: 1, yieldTo: () => commits > 0 });
    const a = source('a');
    q.push(a, 10, item('log1'));
    q.push(a, 10, item('log2'));
    // A claim read in the same turn: its commit is scheduled after the slice.
    commits = 1;
    turns.push(() => (ran.push('commit'), (commits = 0)));
    turn(); // the slice finds the commit waiting: it goes behind it
    expect(ran).toEqual([]);
    turn();
    expect(ran).toEqual(['commit']);
    turn();
    expect(ran).toEqual(['commit', 'log1']);
    // Claims that keep coming do not starve the logs: a slice steps aside once, then runs.
    commits = 1;
    turn();
    expect(ran).toEqual(['commit', 'log1']);
    turn();
    expect(ran).toEqual(['commit', 'log1', 'log2']);
    expect(q.stats.stepsAside).toBe(2);
  });

  it('runs at least one item per slice, however long it takes', () => {
    const { q, ran, item, turn, source } = setup({ sliceMs: 2 });
    const a = source('a');
    q.push(a, 1, item('slow', 50));
    q.push(a, 1, item('next', 1));
    turn();
    expect(ran).toEqual(['slow']);
    turn();
    expect(ran).toEqual(['slow', 'next']);
  });

  it('ends a slice before the item that would take it past its bytes, however fast the items run', () => {
    const { q, ran, item, turn, source } = setup({ sliceMs: 1000, sliceBytes: 100 });
    const a = source('a');
    q.push(a, 40, item('s1', 0));
    q.push(a, 40, item('s2', 0));
    q.push(a, 40, item('s3', 0)); // 120 > 100: next slice
    q.push(a, 500, item('big', 0)); // alone: larger than a slice
    q.push(a, 10, item('s4', 0));
    turn();
    expect(ran).toEqual(['s1', 's2']);
    turn();
    expect(ran).toEqual(['s1', 's2', 's3']);
    turn();
    expect(ran).toEqual(['s1', 's2', 's3', 'big']);
    turn();
    expect(ran).toEqual(['s1', 's2', 's3', 'big', 's4']);
  });

  it('holds a source while it has items waiting, so its later frames queue behind them', () => {
    const { q, item, turn, source } = setup({ sliceMs: 1 });
    const a = source('a');
    const b = source('b');
    expect(q.holds(a)).toBe(false);
    q.push(a, 1, item('a1'));
    q.push(a, 1, item('a2'));
    expect(q.holds(a)).toBe(true);
    expect(q.holds(b)).toBe(false);
    turn();
    expect(q.holds(a)).toBe(true); // a2 still waits
    turn();
    expect(q.holds(a)).toBe(false);
  });

  it('pauses a source that pushes past the high-water mark and resumes it once at or below the low one', () => {
    const { q, item, turn, source } = setup({ sliceMs: 1, highWaterBytes: 100, lowWaterBytes: 40 });
    const a = source('a');
    const b = source('b');
    q.push(a, 60, item('a1'));
    q.push(b, 30, item('b1'));
    expect([...a.log, ...b.log]).toEqual([]); // 90 bytes: under the mark
    q.push(a, 30, item('a2')); // 120 > 100
    q.push(a, 30, item('a3')); // paused once only
    q.push(b, 10, item('b2'));
    expect(a.log).toEqual(['a paused']);
    expect(b.log).toEqual(['b paused']);
    expect(q.stats.pauses).toBe(2);
    expect(q.stats.peakBytes).toBe(160);
    turn(); // a1 runs: 100 left, still above 40
    turn(); // b1: 70
    turn(); // a2: 40 — at the low mark: both resumed
    expect(a.log).toEqual(['a paused', 'a resumed']);
    expect(b.log).toEqual(['b paused', 'b resumed']);
    turn();
    turn();
    expect(a.log).toEqual(['a paused', 'a resumed']);
    expect(q.queuedBytes).toBe(0);
  });

  it('does not resume a source that was dropped (its socket closed)', () => {
    const { q, item, turn, source } = setup({ sliceMs: 1, highWaterBytes: 10, lowWaterBytes: 0 });
    const a = source('a');
    q.push(a, 20, item('a1'));
    q.drop(a);
    turn();
    expect(a.log).toEqual(['a paused']);
  });

  it('goes on after an item that throws', () => {
    const { q, ran, item, turn, turns, source } = setup({ sliceMs: 5 });
    const a = source('a');
    q.push(a, 1, () => {
      throw new Error('boom');
    });
    q.push(a, 1, item('after'));
    expect(() => turn()).toThrow('boom');
    expect(turns).toHaveLength(1);
    turn();
    expect(ran).toEqual(['after']);
  });
});

describe('isIngestFrame', () => {
  const frame = (o: object) => Buffer.from(JSON.stringify(o));
  it('takes log, usage and artifact frames by their type, and any large frame', () => {
    expect(isIngestFrame(frame({ id: '1', type: 'log', taskId: 1, lines: [] }))).toBe(true);
    expect(isIngestFrame(frame({ id: '1', type: 'usage', taskId: 1, inputTokens: 3 }))).toBe(true);
    expect(isIngestFrame(frame({ id: '1', type: 'artifact', taskId: 1 }))).toBe(true);
    expect(isIngestFrame(frame({ id: '1', type: 'claim', pad: 'x'.repeat(20_000) }))).toBe(true);
  });
  it('leaves claims, reports and heartbeats to be handled at once', () => {
    expect(isIngestFrame(frame({ id: '1', type: 'claim' }))).toBe(false);
    expect(isIngestFrame(frame({ id: '2', type: 'report', taskId: 3, fence: 1, status: 'done' }))).toBe(false);
    expect(isIngestFrame(frame({ id: '3', type: 'heartbeat' }))).toBe(false);
  });
});
