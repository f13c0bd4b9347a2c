/**
 * V8 heap tuning for the process that serves agents (the headless server and Electron's main
 * process both call `tuneServerHeap` first thing; issue 32, bench/REPORT.md "flood4").
 *
 * Why: during a log flood the main thread allocates few JS objects but a steady stream of
 * short-lived ArrayBuffers (socket reads, `ws`'s copy of a payload that spans reads: about twice
 * the flood's bytes). V8 (Node 20's) counts the external memory allocated since the last
 * mark-compact against the old generation's headroom (`OldGenerationSpaceAvailable`: limit − size −
 * external since then) and starts incremental marking once that headroom is below the young
 * generation's capacity. After a mark-compact its dynamic growing factor had fallen to 1.1 (the
 * old generation itself grows slowly), so the limit was size + 8 MB + the young generation's
 * capacity: ~8 MB of frames' buffers later the heap was "at its limit" again. Few scavenges run
 * (little JS garbage) to free those buffers first. Traced (`SPLIT_TRACE_GC=1
 * SPLIT_V8_FLAGS=--trace-incremental-marking npx tsx bench/flood-split.ts`): a mark-compact of the
 * whole ~20 MB heap every ~0.6 s of flood, 5–10 per 6-s window, each freeing ~1.5 MB, on the
 * thread that answers claims. A smaller or larger young generation does not help (the headroom
 * check moves with it; bench/REPORT.md "flood4").
 *
 * The lever: a fixed growing factor of 4 (`--heap-growing-percent=300`, the top of V8's own
 * range): after a mark-compact the limit is four times the live size, ~60 MB of headroom for the
 * buffers here, which scavenges free first. Measured per 6-s flood window: 4–6 mark-compacts
 * (0 in some runs) by default, 2–4 at factor 2, 0–1 at factor 4. Cost: the heap may grow to ~4×
 * its live size before a full collection; the server's peak resident set in the flood bench did not
 * move (236–263 MB either way). V8's own factor (1.1–4, from its speed estimates) is no longer used.
 *
 * V8 reads this flag whenever it sets a new limit, so setting it at run time takes effect from the
 * next collection on; it is process-wide (worker threads share it).
 */
import v8 from 'node:v8';

/** The V8 flags, stated once. */
export const SERVER_V8_FLAGS = '--heap-growing-percent=300';

let tuned = false;

/** Sets SERVER_V8_FLAGS for this process (once; later calls do nothing). */
export function tuneServerHeap(): void {
  if (tuned) return;
  tuned = true;
  v8.setFlagsFromString(SERVER_V8_FLAGS);
}
