/**
 * A separate OS process that claims and reports from a shared database file, for the race and
 * crash tests. Usage: node --import tsx claim-worker.ts <dbPath> <name> <mode>
 *   mode "drain": print "ready", wait for a line on stdin, then claim until the queue is empty; report done (every 7th: backlog, re-attempted).
 *   mode "load":  forever create, claim and report; print the last committed audit id after each write.
 * Prints one JSON line per claim in drain mode: {"task":id,"fence":n}.
 */
import { createCore } from '../create-core';

const [dbPath, name, mode] = process.argv.slice(2) as [string, string, string];
// Several processes race on one file: a write may wait for the others' transactions. On a loaded
// machine that wait can pass the 5 s default, which would fail the race for the wrong reason.
const core = createCore({ dbPath, singleWriter: false, busyTimeoutMs: 60_000, config: { lockWindowS: 3600 } });
const inst = core.instances.register({ role: 'dev', name }).id;
const lastAuditId = core.db.prepare<[], { id: number }>('SELECT max(id) AS id FROM audit');

if (mode === 'drain') {
  // Start barrier: every process is ready before any claims, so the race is real.
  process.stdout.write('ready\n');
  await new Promise((resolve) => process.stdin.once('data', resolve));
  process.stdin.destroy();
  let n = 0;
  for (;;) {
    const c = core.locks.claim({ instanceId: inst });
    if (!c.task) break;
    process.stdout.write(`${JSON.stringify({ task: c.task.id, fence: c.lock!.fence })}\n`);
    const status = ++n % 7 === 0 ? 'backlog' : 'done';
    core.locks.report({ instanceId: inst, taskId: c.task.id, fence: c.lock!.fence, status });
  }
  core.close();
} else {
  let i = 0;
  const step = () => {
    for (let k = 0; k < 20; k++) {
      i++;
      core.tasks.create({ title: `load ${name} ${i}`, role: 'dev', idempotencyKey: `${name}-${i}` }, { actor: name });
      process.stdout.write(`committed ${lastAuditId.get()!.id}\n`);
      const c = core.locks.claim({ instanceId: inst });
      process.stdout.write(`committed ${lastAuditId.get()!.id}\n`);
      if (c.task && i % 3 !== 0) {
        core.locks.report({ instanceId: inst, taskId: c.task.id, fence: c.lock!.fence, status: 'done' });
        process.stdout.write(`committed ${lastAuditId.get()!.id}\n`);
      }
    }
    setImmediate(step);
  };
  step();
}
