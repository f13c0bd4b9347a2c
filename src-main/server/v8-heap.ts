/**
 * V8 heap tuning for the process that serves agents (the headless server and Electron's main
 * process both call `tuneServerHeap` first thing; issue 32, bench/REPORT.md "flood4").
 *
 * Why: during a log flood the main thread allocates few JS objects but a steady stream of
 * short-lived ArrayBuffers (socket reads, `ws`'s payload copy; ~2× the flood's bytes). V8 counts
 * external memory allocated since the last mark-compact against the old generation's headroom
 * (its allocation limit minus its size). With the default growing factor the limit after a
 * mark-compact of a ~20 MB heap is about size + 8 MB + the young generation's capacity, and the
 * young generation (grown to its maximum by then) is most of that headroom: a few MB of frames'
 * buffers later the heap is "at its limit" again and V8 starts the next incremental mark-compact.
 * Measured (`SPLIT_TRACE_GC=1 npx tsx bench/flood-split.ts`): 5–10 mark-compacts of the whole
 * ~20 MB heap per 6-s flood window on the thread that answers claims, each freeing ~1.5 MB.
 *
 * The lever: a growing factor of 2 (`--heap-growing-percent=100`): the limit after a mark-compact
 * becomes twice the live size, so the buffers (freed by the next scavenge or mark-compact anyway)
 * no longer exhaust the headroom. Cost: the heap may grow to ~2× its live size before a full
 * collection (tens of MB here). The young generation's size is left as it is: a larger one makes
 * the loop above worse (the headroom check compares against it) and scavenges are cheap.
 *
 * V8 reads this flag whenever it sets a new limit, so setting it at run time takes effect from the
 * next collection on; it is process-wide (worker threads share it).
 */
import v8 from 'node:v8';

/** The V8 flags, stated once. */
export const SERVER_V8_FLAGS = '--heap-growing-percent=100';

let tuned = false;

/** Sets SERVER_V8_FLAGS for this process (once; later calls do nothing). */
export function tuneServerHeap(): void {
  if (tuned) return;
  tuned = true;
  v8.setFlagsFromString(SERVER_V8_FLAGS);
}
