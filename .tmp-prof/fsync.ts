import Database from 'better-sqlite3';
import { benchDir } from '../bench/util';
const db = new Database(benchDir('fs') + '/x.db'); db.pragma('journal_mode = WAL'); db.pragma('synchronous = FULL');
db.exec('CREATE TABLE t (v)'); const ins = db.prepare('INSERT INTO t VALUES (?)');
const tx = db.transaction(() => ins.run(1));
const xs: number[] = [];
for (let i = 0; i < 200; i++) { const t = performance.now(); tx.immediate(); xs.push(performance.now() - t); }
xs.sort((a, b) => a - b); console.log('commit p50', xs[100]!.toFixed(2), 'p99', xs[198]!.toFixed(2));
