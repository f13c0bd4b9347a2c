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

/**
 * GAFFER_BENCH_ISOLATION_PROFILE=DIR (the bench sets it for the start chain): SIGWINCH starts a
 * CPU profile of this process's main thread, the next one writes it to DIR/<n>.cpuprofile
 * (`--cpu-prof` is not allowed in NODE_OPTIONS).
 */
const profileDir = process.env.GAFFER_BENCH_ISOLATION_PROFILE;
if (profileDir) {
  const { Session } = await import('node:inspector');
  const fs = await import('node:fs');
  const path = await import('node:path');
  let session;
  let n = 0;
  process.on('SIGWINCH', () => {
    if (!session) {
      session = new Session();
      session.connect();
      session.post('Profiler.enable', () => session.post('Profiler.start'));
      return;
    }
    const s = session;
    session = undefined;
    s.post('Profiler.stop', (err, r) => {
      if (!err) fs.writeFileSync(path.join(profileDir, `${++n}.cpuprofile`), JSON.stringify(r.profile));
      s.disconnect();
    });
  });
}
