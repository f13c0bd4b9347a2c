#!/usr/bin/env node
/**
 * Instructions per task of the hub in process (bench/hub-instr.ts) for one or more checkouts, by
 * callgrind: each checkout runs twice, with LOW and HIGH measured tasks after the same seeding and
 * warm-up; (I(HIGH) − I(LOW)) / (HIGH − LOW) is the instructions of one task, frame to reply
 * (no sockets, no fsync). Instruction counts do not move with the machine's load.
 *   node bench/hub-instr.mjs <checkout> [<checkout> …] [--low 200] [--high 1200]     (CLAIM_NEXT=0: claim → report)
 * All runs go at once (valgrind runs a process on one CPU at a time; counts do not depend on it).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args.splice(at, 2)[1]) : dflt;
};
const low = opt('--low', 200);
const high = opt('--high', 1200);
if (args.length === 0) {
  console.error('usage: node bench/hub-instr.mjs <checkout> [<checkout> …] [--low N] [--high N]');
  process.exit(2);
}
const here = path.dirname(fileURLToPath(import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-instr-cg-'));
const count = (dir, tasks) =>
  new Promise((resolve, reject) => {
    const out = path.join(tmp, `cg.${path.basename(dir)}.${tasks}`);
    const p = spawn(
      'valgrind',
      ['--tool=callgrind', `--callgrind-out-file=${out}`, process.execPath, '--import', import.meta.resolve('tsx'), path.join(here, 'hub-instr.ts'), dir, String(tasks)],
      { cwd: path.resolve(dir), env: { ...process.env, SEED: process.env.SEED ?? String(high + 1500) }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let err = '';
    p.stderr.on('data', (d) => (err += d));
    p.on('close', () => {
      fs.rmSync(out, { force: true });
      const m = /Collected : (\d+)/.exec(err);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`callgrind failed for ${dir}: ${err.slice(-2000)}`));
    });
  });
const runs = await Promise.all(args.map((dir) => Promise.all([count(dir, low), count(dir, high)])));
args.forEach((dir, i) => {
  const [lo, hi] = runs[i];
  console.log(`${dir}: ${((hi - lo) / (high - low)).toFixed(0)} instructions per task (${lo} at ${low}, ${hi} at ${high}; load ${os.loadavg()[0].toFixed(1)})`);
});
fs.rmSync(tmp, { recursive: true, force: true });
