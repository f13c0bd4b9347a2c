/**
 * The checkpoint thread's code (checkpointer.ts starts one per database file): on its own
 * connection it copies what the WAL holds into the database file with PASSIVE checkpoints, so the
 * copy and the database file's fsync do not run inside a commit on the thread that serves claims.
 *
 * It is a plain script run with `eval`, not a module file: it needs nothing but better-sqlite3
 * (its path resolved by the main thread), and a worker started from the TypeScript sources boots
 * tsx's loader first — ~400 ms of CPU at every start (the log and export workers pay it), which a
 * thread started with the core would spend beside its first work. Nor does a build need to bundle
 * it.
 *
 * It keeps no event loop busy: it sleeps in `Atomics.wait` on the control array (checkpoint-ctl.ts
 * `Ctl`) for a tick at a time, reads the main thread's commit count, and checkpoints when there are
 * commits it has not copied and either none came for `idleMs` or the oldest has waited `maxDelayMs`.
 * A PASSIVE checkpoint takes no lock a commit waits for: it copies the frames committed when it
 * began and leaves the rest; a commit landing meanwhile goes on in the WAL. It never writes a row.
 *
 * Stop: the main thread sets `Ctl.Stop` and waits (synchronously) for `Ctl.State` to become
 * `State.Closed`, set here once this connection is closed: the main connection must be the last one
 * to close, so that it folds the WAL back and deletes it (open.ts, the clean-close mark).
 *
 * Messages out (only when something happened): `{done: {log, copied, ms}}` after a checkpoint that
 * copied frames (when `report` is set: tests), `{error: message}` once per distinct error.
 */
import { Ctl, State } from './checkpoint-ctl';

export const CHECKPOINT_WORKER_JS = `
'use strict';
const { parentPort: port, workerData: data } = require('node:worker_threads');
const ctl = new Int32Array(data.ctl);
function run() {
  // The main thread may have given up on this thread before it ran (a core closed at once).
  if (Atomics.compareExchange(ctl, ${Ctl.State}, ${State.Starting}, ${State.Open}) !== ${State.Starting}) return;
  // Linux: a nice value belongs to the thread that sets it (worker-thread.ts niceThisThread).
  if (data.nice && process.platform === 'linux') {
    try { require('node:os').setPriority(data.nice); } catch {}
  }
  let db;
  let lastError = '';
  try {
    const Database = require(data.sqlitePath);
    db = new Database(data.dbPath, { fileMustExist: true, ...(data.nativeBinding ? { nativeBinding: data.nativeBinding } : {}) });
    db.pragma('busy_timeout = 0');
    // The checkpoint's syncs follow this connection's setting: FULL syncs the WAL before the copy and
    // the database file after it, before the WAL may be written over (open.ts, invariant 1).
    db.pragma('synchronous = FULL');
    const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
    let copiedAt = Atomics.load(ctl, ${Ctl.Commits});
    let seen = copiedAt;
    let changedAt = 0;
    let waitingSince = 0;
    while (Atomics.load(ctl, ${Ctl.Stop}) === 0) {
      Atomics.wait(ctl, ${Ctl.Stop}, 0, data.tickMs);
      if (Atomics.load(ctl, ${Ctl.Stop}) !== 0) break;
      const now = performance.now();
      const commits = Atomics.load(ctl, ${Ctl.Commits});
      if (commits !== seen) {
        if (seen === copiedAt) waitingSince = now;
        seen = commits;
        changedAt = now;
      }
      if (commits === copiedAt) continue;
      if (now - changedAt < data.idleMs && now - waitingSince < data.maxDelayMs) continue;
      try {
        const row = checkpoint.get();
        // Busy: another checkpoint (the main connection's backstop) holds the lock; try at the next tick.
        if (row.busy) continue;
        copiedAt = commits;
        if (data.report && row.checkpointed > 0) port.postMessage({ done: { log: row.log, copied: row.checkpointed, ms: performance.now() - now } });
      } catch (e) {
        if (e.message !== lastError) port.postMessage({ error: e.message });
        lastError = e.message;
      }
    }
  } catch (e) {
    port.postMessage({ error: 'cannot open ' + data.dbPath + ' for checkpoints: ' + e.message });
  } finally {
    try {
      if (db) db.close();
    } finally {
      Atomics.store(ctl, ${Ctl.State}, ${State.Closed});
      Atomics.notify(ctl, ${Ctl.State});
    }
  }
}
run();
`;
