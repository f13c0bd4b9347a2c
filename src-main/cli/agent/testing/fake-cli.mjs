#!/usr/bin/env node
/**
 * A stand-in for a CLI agent in tests (the real CLIs are not installed): replays a fixture of its
 * documented JSON output on stdout, one line at a time, then exits.
 *
 *   node fake-cli.mjs FIXTURE.jsonl [EXIT_STATUS] [DELAY_MS]
 *
 * Lines starting with "#" are comments; "stderr: text" goes to stderr instead.
 */
import fs from 'node:fs';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

const [fixture, status = '0', delay = '0'] = process.argv.slice(2);
const lines = fs.readFileSync(fixture, 'utf8').split('\n').filter((l) => l && !l.startsWith('#'));
for (const line of lines) {
  if (line.startsWith('stderr: ')) process.stderr.write(`${line.slice(8)}\n`);
  else process.stdout.write(`${line}\n`);
  if (Number(delay) > 0) await sleep(Number(delay));
}
process.exitCode = Number(status);
