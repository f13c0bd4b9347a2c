/** The backfill status machine: its edges and the refusals (the checker's replay: rehearsal 5 and service.test.ts). */
import { describe, expect, it } from 'vitest';
import { allBackfillEdges, assertBackfillEdge } from './backfill-transitions';

const edges = (list: Array<{ cause: string; from: string | null; to: string }>) => list.map((e) => `${e.cause}:${e.from ?? '∅'}→${e.to}`).sort();

describe('backfill status machine', () => {
  it('has exactly the edges of docs/jobs.md §5', () => {
    expect(edges(allBackfillEdges())).toEqual(
      [
        'enqueue:∅→queued',
        'enqueue:∅→held',
        'dispatch:queued→dispatched',
        'done:dispatched→done',
        'fail:dispatched→failed',
        'requeue:dispatched→queued',
        ...['queued', 'held', 'failed'].flatMap((f) => [`run_now:${f}→queued`, `cancel:${f}→cancelled`, `mark_done:${f}→done`]),
      ].sort(),
    );
  });

  it('refuses any other edge with invalid_transition', () => {
    expect(() => assertBackfillEdge('requeue', 'done', 'queued')).toThrow(expect.objectContaining({ code: 'invalid_transition' }));
    expect(() => assertBackfillEdge('cancel', 'dispatched', 'cancelled')).toThrow(/cannot go from dispatched to cancelled by cancel/);
  });
});
