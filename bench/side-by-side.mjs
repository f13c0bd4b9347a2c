#!/usr/bin/env node
/**
 * Two commits' bench figures on the same machine, in alternating runs (A B A B …), so a change of
 * load hits both sides alike. Each commit is checked out once into a temporary worktree sharing this
 * checkout's node_modules; every round runs `tsx bench/run.ts <suites>` there and reads the figures
 * it writes to bench/.results.json.
 *
 *   node bench/side-by-side.mjs <before> <after> [--rounds N] [--patch FILE] <suite> [<suite> …]
 *
 * --patch applies a patch to both checkouts (`git apply`), for a bench fix the older commit lacks
 * (e.g. the hub bench's token per 64 sockets); it may be given more than once (applied in order).
 * A checkout that already holds a patch (it applies in reverse) is left as it is; otherwise it must
 * apply to both, or nothing runs.
 *
 * Prints, per figure, the median of each side, the ratio after/before, and the load during the runs.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(args.splice(roundsAt, 2)[1]) : 3;
const patches = [];
for (let at = args.indexOf('--patch'); at >= 0; at = args.indexOf('--patch')) patches.push(path.resolve(args.splice(at, 2)[1]));
const [before, after, ...suites] = args;
if (!before || !after || suites.length === 0 || !(rounds >= 1)) {
  console.error('usage: node bench/side-by-side.mjs <before> <after> [--rounds N] [--patch FILE] <suite> [<suite> …]');
  process.exit(2);
}

const git = (...a) => spawnSync('git', a, { cwd: root, encoding: 'utf8' });
const base = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-side-'));
const sides = [before, after].map((rev, i) => {
  const sha = git('rev-parse', '--short', rev).stdout.trim();
  if (!sha) throw new Error(`unknown commit ${rev}`);
  const dir = path.join(base, `${i === 0 ? 'before' : 'after'}-${sha}`);
  const r = git('worktree', 'add', '--detach', dir, sha);
  if (r.status !== 0) throw new Error(r.stderr);
  fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
  for (const patch of patches) {
    if (spawnSync('git', ['apply', '--reverse', '--check', patch], { cwd: dir }).status === 0) {
      console.log(`(${path.basename(patch)}: already in ${sha}, not applied)`);
      continue;
    }
    const p = spawnSync('git', ['apply', patch], { cwd: dir, encoding: 'utf8' });
    if (p.status !== 0) throw new Error(`${patch} does not apply to ${sha}: ${p.stderr}`);
  }
  return { rev, sha, dir, runs: [] };
});

const loads = [];
try {
  for (let round = 1; round <= rounds; round++) {
    for (const side of round % 2 ? sides : [...sides].reverse()) {
      loads.push(os.loadavg()[0]);
      console.log(`\n## round ${round}: ${side.rev} (${side.sha}), load ${os.loadavg()[0].toFixed(1)}`);
      const r = spawnSync('npx', ['tsx', 'bench/run.ts', ...suites], { cwd: side.dir, stdio: 'inherit' });
      if (r.status !== 0) throw new Error(`bench failed at ${side.sha}`);
      side.runs.push(JSON.parse(fs.readFileSync(path.join(side.dir, 'bench', '.results.json'), 'utf8')).results);
    }
  }
} finally {
  for (const side of sides) git('worktree', 'remove', '--force', side.dir);
  fs.rmSync(base, { recursive: true, force: true });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(`\n# side by side: ${sides[0].rev} (${sides[0].sha}) → ${sides[1].rev} (${sides[1].sha}), ${rounds} alternating rounds`);
console.log(`load (1 min) at each start: min ${Math.min(...loads).toFixed(1)}, max ${Math.max(...loads).toFixed(1)} on ${os.cpus().length} CPUs\n`);
console.log('| suite | figure | before (median) | after (median) | after / before |\n|---|---|---|---|---|');
for (const suite of suites) {
  const keys = Object.keys(sides[1].runs[0]?.[suite] ?? {});
  for (const key of keys) {
    const [b, a] = sides.map((s) => median(s.runs.map((r) => r[suite]?.[key]).filter((v) => typeof v === 'number')));
    if (b === undefined || a === undefined) continue;
    console.log(`| ${suite} | ${key} | ${+b.toFixed(3)} | ${+a.toFixed(3)} | ${b ? (a / b).toFixed(2) : '—'} |`);
  }
}
