/**
 * A naive claimer for the baseline benchmark: "select the best task, then update it" in
 * autocommit mode — the design Gaffer's claim lock replaces. Prints one claimed task id per line.
 * Usage: tsx bench/baseline-worker.ts <dbPath>
 */
import Database from 'better-sqlite3';

const db = new Database(process.argv[2]!);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = FULL');
const pick = db.prepare<[], { id: number }>(`SELECT id FROM tasks WHERE status = 'backlog' ORDER BY priority DESC, id LIMIT 1`);
const take = db.prepare(`UPDATE tasks SET status = 'in_progress', last_holder = ? WHERE id = ?`);
const finish = db.prepare(`UPDATE tasks SET status = 'done' WHERE id = ?`);
process.stdout.write('ready\n');
process.stdin.once('data', () => {
  process.stdin.destroy();
  const out: number[] = [];
  for (;;) {
    const row = pick.get();
    if (!row) break;
    take.run(String(process.pid), row.id); // nothing stops a second process between pick and take
    out.push(row.id);
    finish.run(row.id);
  }
  process.stdout.write(`${out.join('\n')}\n`);
  db.close();
});
