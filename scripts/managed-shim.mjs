#!/usr/bin/env node
/**
 * The shim Gaffer runs a `long_running` managed agent through: `node managed-shim.mjs -- COMMAND [ARGS…]`.
 *
 * A long-running command is an agent of its own and knows nothing of Gaffer's lifetime. The shim
 * ties it to Gaffer:
 * 1. Gaffer starts the shim as the leader of a new process group; the command runs in that same
 *    group, so Gaffer's SIGTERM / SIGKILL to the group reach both.
 * 2. The shim's stdin is a pipe from Gaffer that Gaffer never writes to. When it closes — Gaffer
 *    stopped, or was killed with -9 — or the shim is reparented, or Gaffer sends SIGTERM, the shim
 *    ends the command's whole family (src-main/cli/agent/process-family.mjs, the same code the
 *    command agent's watchdog runs): the group (the shim itself survives the SIGTERM), whatever
 *    carries this process's GAFFER_MANAGED_PROCESS marker (a grandchild that left the group with
 *    setsid) and their descendants; SIGKILL 10 s later to what is left. Then it exits.
 * 3. It exits with the command's status (128 + the signal number if it was killed), and with 78
 *    when the command cannot be started at all (not found, not executable), which Gaffer does not
 *    restart. When the command exits by itself, what is left of its family is ended first.
 * 4. The agent token arrives on a pipe (GAFFER_TOKEN_FD) and goes on to the command in a 0600 file
 *    named by GAFFER_TOKEN_FILE, which the command deletes once read (PROTOCOL §17; the SDKs'
 *    `agentTokenFromEnvironment()` / `token_from_environment()` do) and the shim removes when the
 *    command exits: a file, not a pipe, because the command may be a wrapper (`npx tsx agent.ts`)
 *    and a variable passes through one where a file descriptor does not. It is in neither
 *    process's environment nor argv.
 */
import { spawn } from 'node:child_process';
import console from 'node:console';
import os from 'node:os';
import process from 'node:process';
import { endFamily, onPipeClosed } from '../src-main/cli/agent/process-family.mjs';
import { secretFiles, takeProcessSecrets } from './lib/process-secrets.mjs';
import { restoreUserUmask } from './lib/umask.mjs';

const secrets = takeProcessSecrets();
restoreUserUmask();

const sep = process.argv.indexOf('--');
const [command, ...args] = sep < 0 ? [] : process.argv.slice(sep + 1);
if (!command) {
  console.error('usage: managed-shim.mjs -- COMMAND [ARGS…]');
  process.exit(2);
}

const KILL_AFTER_MS = 10_000;
// Our stdout/stderr are pipes to Gaffer: once it is gone, writing fails with EPIPE — never a crash.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
const marker = process.env.GAFFER_MANAGED_PROCESS;
const family = { groups: [process.pid], ...(marker ? { marker: { variable: 'GAFFER_MANAGED_PROCESS', value: marker } } : {}), killAfterMs: KILL_AFTER_MS };
/** Set once the family is being ended: then the shim exits when that is done, not before. */
let ending;
let status = 143;

const handOff = secretFiles({ GAFFER_TOKEN: secrets.tokens.GAFFER_TOKEN }, process.env);
const child = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], env: handOff.env });
process.on('exit', () => handOff.cleanup());

child.once('error', (e) => {
  if (child.pid !== undefined) return;
  console.error(`gaffer shim: cannot start ${command}: ${e.code ?? 'error'}: ${e.message}`);
  process.exit(78);
});

child.once('exit', (code, signal) => {
  status = code ?? 128 + (os.constants.signals[signal] ?? 0);
  // Anything the command left behind goes with it.
  ending ??= endFamily(family);
  void ending.then(() => process.exit(status));
});

function stop(why) {
  if (ending) return;
  console.error(`gaffer shim: ${why}: stopping ${command}`);
  // The command is part of the family: once it has exited, its status is ours (the exit handler).
  // Gaffer's SIGTERM went to the whole group: the command is not sent a second one.
  ending = endFamily({ ...family, groupsSignalled: why === 'SIGTERM' });
  void ending.then(() => {
    if (child.exitCode === null && child.signalCode === null) {
      // Still there: without /proc (macOS) the family could not be watched; the group gets SIGKILL
      // (the shim included) unless the command exits first.
      setTimeout(() => process.kill(-process.pid, 'SIGKILL'), KILL_AFTER_MS).unref();
      return;
    }
    process.exit(status);
  });
}

// Gaffer's SIGTERM reaches the command too (same group): end the family, then exit alike.
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => stop(sig));

process.stdin.on('data', () => {});
onPipeClosed(process.stdin, () => stop('Gaffer is gone (its pipe closed)'));
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop('Gaffer is gone (the shim was reparented)');
}, 1000).unref();
