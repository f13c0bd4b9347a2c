#!/usr/bin/env node
/**
 * A command for the command agent's end-to-end tests. It does what the task's (or job's) payload
 * says, so one command serves every scenario:
 *
 *   { "codes": [75, 0],          exit status per attempt (default 0)
 *     "steps": ["a", "b"],       control step lines, leaving out the ones GAFFER_COMPLETED_STEPS lists
 *     "usage": {…},              one control usage line
 *     "sleepMs": 500,            wait before exiting
 *     "family": "/tmp/pids",     start a grandchild (sleep 300) and write "pid grandchildPid" there
 *     "escapee": "/tmp/pid",     start a sleep 300 that leaves the process group (setsid), write its pid there
 *     "ignoreTerm": true }       ignore SIGTERM (with "family": the grandchild ignores it too)
 *
 * It always writes GAFFER_OUTPUT_FILE with what it saw: its GAFFER_* variables, whether any token
 * reached it, and whether stdin and the payload file held the same JSON.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { Buffer } from 'node:buffer';
import console from 'node:console';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const stdin = Buffer.concat(chunks).toString('utf8');
const env = process.env;
const doc = JSON.parse(fs.readFileSync(env.GAFFER_PAYLOAD_FILE, 'utf8'));
const want = doc.payload ?? {};
const attempt = Number(env.GAFFER_ATTEMPT);
const completed = JSON.parse(env.GAFFER_COMPLETED_STEPS ?? '[]');
/** One control line, signed with this attempt's token (docs/command-agent.md). */
const control = (message) => console.log(`::gaffer:${env.GAFFER_CONTROL_TOKEN}:: ${JSON.stringify(message)}`);

if (want.ignoreTerm) process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
console.log(`hello from ${env.GAFFER_KIND} attempt ${attempt}`);
console.error('a line on stderr');
for (const step of want.steps ?? []) {
  if (!completed.includes(step)) control({ step, ref: `ref-${step}-${attempt}` });
}
const seen = Object.fromEntries(Object.entries(env).filter(([k]) => k.startsWith('GAFFER_')));
const tokenSeen = Object.values(env).some((v) => typeof v === 'string' && (v.includes('gft_') || v.includes('gfo_')));
fs.writeFileSync(env.GAFFER_OUTPUT_FILE, JSON.stringify({ env: seen, tokenSeen, stdinMatchesFile: JSON.stringify(JSON.parse(stdin)) === JSON.stringify(doc), cwd: process.cwd() }));

if (want.family) {
  const grandchild = spawn('/bin/sh', ['-c', want.ignoreTerm ? "trap '' TERM; sleep 300" : 'sleep 300'], { stdio: 'ignore' });
  fs.writeFileSync(want.family, `${process.pid} ${grandchild.pid}`);
}
if (want.escapee) {
  const escapee = spawn('sleep', ['300'], { stdio: 'ignore', detached: true });
  escapee.unref();
  fs.writeFileSync(want.escapee, String(escapee.pid));
}
// After the pid file: usage past a spend cap gets the group killed at once, and the tests that
// check that read the pids first.
if (want.usage) control({ usage: want.usage });
if (want.sleepMs) await sleep(want.sleepMs);
process.exit(want.codes?.[attempt - 1] ?? 0);
