/**
 * Preloaded (NODE_OPTIONS=--import) into the headless Gaffer of `npm run bench -- isolation`: on
 * SIGUSR2 the process's wall clock (Date.now, which Gaffer's system clock reads) steps forward by
 * GAFFER_BENCH_JUMP_MS (default one day) while its monotonic clock (performance.now) does not —
 * what a machine waking from a day's sleep looks like to the process (on Linux the monotonic clock
 * does not advance during a suspend). Gaffer's gap detector notices it as it would a real sleep.
 * Plain JavaScript so that any Node process of the start chain can load it.
 */
const realNow = Date.now;
const step = Number(process.env.GAFFER_BENCH_JUMP_MS ?? 86_400_000);
let offset = 0;
Date.now = () => realNow() + offset;
process.on('SIGUSR2', () => {
  offset += step;
});
