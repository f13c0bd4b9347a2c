/**
 * `npm run bench`: runs every benchmark and prints its figures (no timing is ever asserted).
 * `npm run bench -- core hub` runs a subset; a full run also writes bench/REPORT.md with charts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo } from './util';
import { writeReport } from './report';

const here = path.dirname(fileURLToPath(import.meta.url));
const SUITES: Record<string, [file: string, fn: string]> = {
  core: ['core.ts', 'runCoreBench'],
  floor: ['floor.ts', 'runFloorBench'],
  hub: ['hub.ts', 'runHubBench'],
  jobs: ['jobs.ts', 'runJobsBench'],
  audit: ['audit.ts', 'runAuditBench'],
  baseline: ['baseline.ts', 'runBaselineBench'],
  logs: ['logs.ts', 'runLogsBench'],
  agent: ['command-agent.ts', 'runCommandAgentBench'],
  attention: ['attention.ts', 'runAttentionBench'],
  verify: ['verify.ts', 'runVerifyBench'],
  startup: ['startup.ts', 'runStartupBench'],
  idle: ['idle.ts', 'runIdleBench'],
  workspace: ['workspace.ts', 'runWorkspaceBench'],
  transcript: ['transcript.ts', 'runTranscriptBench'],
  isolation: ['isolation.ts', 'runIsolationBench'],
};

const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length ? wanted : Object.keys(SUITES);
console.log(`# Gaffer benchmarks\n\nmachine: ${machineInfo()}\ndate: ${new Date().toISOString()}`);
const results: Record<string, Record<string, number>> = {};
const loads: number[] = [];
const loadTimer = setInterval(() => loads.push(os.loadavg()[0]!), 30_000).unref();
for (const name of names) {
  const suite = SUITES[name];
  if (!suite) {
    console.error(`unknown suite ${name}; known: ${Object.keys(SUITES).join(', ')}`);
    process.exit(2);
  }
  const file = path.join(here, suite[0]);
  if (!fs.existsSync(file)) {
    console.log(`\n(${name}: ${suite[0]} not present, skipped)`);
    continue;
  }
  const mod = (await import(file)) as Record<string, () => Promise<Record<string, number>>>;
  results[name] = await mod[suite[1]]!();
}
clearInterval(loadTimer);
const at = new Date().toISOString();
const load = loads.length ? `min ${Math.min(...loads).toFixed(1)}, median ${[...loads].sort((a, b) => a - b)[loads.length >> 1]!.toFixed(1)}, max ${Math.max(...loads).toFixed(1)} on ${os.cpus().length} CPUs` : undefined;
const out = path.join(here, '.results.json');
fs.writeFileSync(out, JSON.stringify({ machine: machineInfo(), at, load, results }, null, 2));
if (wanted.length === 0) {
  const report = writeReport(here, machineInfo(), at, results, load);
  console.log(`\nreport written to ${path.relative(process.cwd(), report)} (figures in ${path.relative(process.cwd(), out)})`);
} else {
  console.log(`\nfigures written to ${path.relative(process.cwd(), out)} (the report is written by a full run)`);
}
