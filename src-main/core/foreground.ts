/**
 * "An agent's request is being served": a count in one SharedArrayBuffer, raised by the thread that
 * serves agents (server/agent-socket.ts) from reading a request frame until its reply is written,
 * and read by background workers between their units of work (the audit export's worker,
 * core/audit/export-worker.ts), which step aside — sleep — while it is up, for a bounded time.
 *
 * Why: on 2 CPUs a background worker's CPU is what a claim's own turn and the requesting agent wait
 * for (issue 32, bench/REPORT.md "iso5"). A nice value orders threads only inside one session
 * (Linux autogroup), so it does not make the worker give way to an agent's process; sleeping does.
 *
 * Invariants:
 * 1. Advisory only: nothing waits for the count to fall, a worker sleeps at most its own bound per
 *    check (`stepAside`'s `maxMs`), so a count left up (a request that gets no reply) slows a
 *    background task, never stops it.
 * 2. Never below zero (`leave` without `enter` is ignored), so a stray reply cannot hide a later request.
 */

/** One Int32: the number of agents' requests read and not yet answered, process-wide. */
export const foreground = new Int32Array(new SharedArrayBuffer(4));

/** A request frame was read (on the thread that serves agents). */
export function enterForeground(flag: Int32Array = foreground): void {
  Atomics.add(flag, 0, 1);
}

/** Its reply was written (or its connection closed). */
export function leaveForeground(flag: Int32Array = foreground): void {
  for (;;) {
    const v = Atomics.load(flag, 0);
    if (v <= 0) return; // invariant 2
    if (Atomics.compareExchange(flag, 0, v, v - 1) === v) break;
  }
  Atomics.notify(flag, 0);
}

/**
 * In a worker: while the count is up, sleep (futex wait, woken as soon as it changes), at most
 * `maxMs` in all. Returns the ms it slept.
 */
export function stepAside(flag: Int32Array, maxMs: number): number {
  const start = performance.now();
  for (;;) {
    const v = Atomics.load(flag, 0);
    const left = maxMs - (performance.now() - start);
    if (v <= 0 || left <= 0) return performance.now() - start;
    Atomics.wait(flag, 0, v, left);
  }
}
