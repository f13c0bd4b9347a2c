#!/usr/bin/env node
/**
 * The command agent's watchdog: `node watchdog.mjs --marker-prefix PREFIX --kill-after-ms N`.
 * Started by the agent (lifeline.ts) next to it; ends the agent's commands when the agent is gone,
 * however it went (kill -9 included), so a task whose lock then expires and is claimed again never
 * has two executors.
 *
 * Invariants:
 * 1. Its stdin is a pipe from the agent, which writes `+PGID` when a command starts (its process
 *    group) and `-PGID` once that group is gone. Nothing else holds the pipe's other end, so it
 *    ends exactly when the agent has exited.
 * 2. Then it ends the family (process-family.mjs) of every group still listed, plus every process
 *    whose GAFFER_LIFELINE starts with PREFIX (a command of this agent, or what one started, that
 *    left its group with setsid), plus their descendants: SIGTERM, SIGKILL after N ms. Then it
 *    exits. A listed group is ended only while it is still the one that was listed: its leader has
 *    the start time it had when listed, or it has no leader any more but members (a group id is
 *    not reused while it has members).
 * 3. It ignores SIGINT, SIGTERM and SIGHUP: a Ctrl-C, a supervisor's SIGTERM to the agent's group
 *    or a closed terminal stop the agent, and the watchdog must outlive it to do its work.
 */
import console from 'node:console';
import process from 'node:process';
import { endFamily, listProcesses, onPipeClosed, readProcStat, running } from './process-family.mjs';

function option(name, fallback) {
  const i = process.argv.indexOf(name);
  return i > 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const prefix = option('--marker-prefix');
const killAfterMs = Number(option('--kill-after-ms', '10000'));
if (!prefix || !Number.isFinite(killAfterMs)) {
  console.error('usage: watchdog.mjs --marker-prefix PREFIX [--kill-after-ms N]');
  process.exit(2);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => {});
// Our stderr is the agent's: under a supervisor that is gone it fails with EPIPE — never a crash.
process.stderr.on('error', () => {});

/** pgid → its leader's start ticks when listed ('' where there is no /proc). */
const groups = new Map();
let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop();
  for (const line of lines) {
    const pgid = Number(line.slice(1));
    if (!Number.isInteger(pgid) || pgid <= 1) continue;
    if (line[0] === '+') groups.set(pgid, readProcStat(pgid)?.startTicks ?? '');
    else if (line[0] === '-') groups.delete(pgid);
  }
});

/** Invariant 2: the listed groups that are still the ones listed. */
function sameGroups() {
  const all = listProcesses();
  if (!all) return [...groups.keys()];
  return [...groups].filter(([pgid, ticks]) => {
    const leader = all.find((p) => p.pid === pgid);
    if (leader) return running(leader) && leader.startTicks === ticks;
    return all.some((p) => p.pgrp === pgid && running(p));
  }).map(([pgid]) => pgid);
}

onPipeClosed(process.stdin, () => {
  const listed = sameGroups();
  void endFamily({ groups: listed, marker: { variable: 'GAFFER_LIFELINE', prefix }, killAfterMs }).then((outcome) => {
    if (outcome !== 'gone') console.error(`gaffer agent watchdog: the agent is gone; its commands were ${outcome === 'killed' ? 'killed' : 'ended'}`);
    process.exit(0);
  });
});
