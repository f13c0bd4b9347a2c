#!/usr/bin/env node
/**
 * The functions of a `.cpuprofile` by self time, and the inclusive time of those whose name
 * matches a pattern — enough to compare two profiles of the same bench without DevTools.
 *
 *   node bench/profile-top.mjs <file.cpuprofile> [--top N] [--match REGEX]
 *
 * e.g. the log flood's main thread (bench/isolation.ts, GAFFER_BENCH_ISOLATION_PROFILE=DIR):
 *   node bench/profile-top.mjs DIR/flood.cpuprofile --match 'toString|logBytes|logText|^slice '
 * Times are the sampler's (wall time while the thread ran JS or native code, `(idle)` apart).
 */
import { readCpuProfile } from './cpuprofile.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : dflt;
};
const top = Number(opt('--top', 20));
const match = opt('--match', undefined);
const file = args[0];
if (!file) {
  console.error('usage: node bench/profile-top.mjs <file.cpuprofile> [--top N] [--match REGEX]');
  process.exit(2);
}
const { profile: p, byId, parent } = readCpuProfile(file);
const name = (id) => {
  const f = byId.get(id).callFrame;
  return `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
};
const sampled = new Map();
for (let i = 0; i < p.samples.length; i++) sampled.set(p.samples[i], (sampled.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
const self = new Map();
const inclusive = new Map();
let total = 0;
for (const [id, us] of sampled) {
  total += us;
  self.set(name(id), (self.get(name(id)) ?? 0) + us);
  const seen = new Set();
  for (let x = id; x !== undefined; x = parent.get(x)) {
    const k = name(x);
    if (seen.has(k)) continue; // a recursive function counts once per sample
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + us);
  }
}
const ms = (us) => (us / 1000).toFixed(1).padStart(9);
const idle = [...self].filter(([k]) => k.startsWith('(idle)')).reduce((a, [, us]) => a + us, 0);
console.log(`${file}: ${ms(total)} ms sampled, ${ms(total - idle)} ms busy`);
console.log('self ms    function');
for (const [k, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${k}`);
if (match) {
  const re = new RegExp(match);
  console.log(`inclusive ms  functions matching /${match}/`);
  for (const [k, us] of [...inclusive].filter(([k]) => re.test(k)).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(us)}  ${k}`);
}
