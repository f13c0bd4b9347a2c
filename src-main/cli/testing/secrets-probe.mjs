/**
 * Test probe for scripts/lib/process-secrets.mjs: takes this process's tokens, then prints one JSON
 * line with what it got, what a child of it inherits and what that child reads in this process's
 * /proc/<pid>/environ; stays alive until stdin closes, so a test can look at it from outside.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import process from 'node:process';
import { secretWarnings, takeProcessSecrets } from '../../../scripts/lib/process-secrets.mjs';

const secrets = takeProcessSecrets();
// Looked at at once: the next file this process opens may get the number 3 again.
const fd3Open = (() => {
  try {
    fs.fstatSync(3);
    return true;
  } catch {
    return false;
  }
})();
const child = spawnSync(
  process.execPath,
  ['-e', 'const fs = require("fs"); process.stdout.write(JSON.stringify({ env: process.env, parentEnviron: fs.readFileSync(`/proc/${process.ppid}/environ`, "utf8") }))'],
  { encoding: 'utf8' },
);
const seen = JSON.parse(child.stdout);
process.stdout.write(
  `${JSON.stringify({
    pid: process.pid,
    tokens: secrets.tokens,
    from: secrets.from,
    cleared: secrets.cleared,
    problems: secrets.problems,
    warnings: secretWarnings(secrets),
    again: takeProcessSecrets() === secrets,
    ownEnv: process.env,
    fd3Open,
    childEnv: seen.env,
    parentEnvironSeenByChild: seen.parentEnviron,
  })}\n`,
);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
