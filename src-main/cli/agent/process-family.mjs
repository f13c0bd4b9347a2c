/**
 * A command's process family, and ending it whole. Plain JavaScript (no build step, Node built-ins
 * only) because three kinds of process use it: the command agent (through process-group.ts and
 * lifeline.ts), its watchdog (watchdog.mjs) and the shim of long-running managed agents
 * (scripts/managed-shim.mjs); and Gaffer's reaper of managed processes. Types: process-family.d.mts.
 *
 * The family of a command is:
 *   - every member of its process group(s) (a command and what it starts, unless they leave),
 *   - every process whose initial environment carries its marker (an environment variable every
 *     descendant inherits, set when the command is started: it follows a process that left the
 *     group on purpose with `setsid`), and
 *   - every descendant (by parent pid) of those, wherever its group or session (one that also
 *     cleared its environment, as long as its parent is still there when the family is listed).
 *
 * Invariants:
 * 1. Nothing is signalled that is not verified to be of the family just before: a pid is signalled
 *    only while its start time (/proc/PID/stat, clock ticks since boot) is the one it had when it
 *    was found, and a group only while it has a member (the kernel does not hand out a group id
 *    that still has members).
 * 2. `endFamily` sends SIGTERM once to everything it finds, checks every POLL_MS whether any of
 *    it is left and looks for more every few polls (a process forked meanwhile, or one that left
 *    the group, is found and signalled too), sends SIGKILL to what is left `killAfterMs` later,
 *    and resolves once nothing of the family runs (or `giveUpMs` after the SIGKILL: a process in
 *    uninterruptible sleep).
 * 3. Where there is no /proc (macOS) only groups can be found: markers and descendants are Linux
 *    only. The caller's own process is never part of a family.
 */
import fs from 'node:fs';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';

export const POLL_MS = 50;
const REDISCOVER = 5;

/** One process's /proc stat, or undefined (gone, or no /proc). */
export function readProcStat(pid) {
  let stat;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
  //  cutime cstime priority nice threads itrealvalue starttime …" — comm may hold spaces and ')'.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { pid, state: f[0] ?? '?', ppid: Number(f[1]), pgrp: Number(f[2]), startTicks: f[19] ?? '' };
}

/** Every process /proc lists, or undefined where there is no /proc (macOS, Windows). */
export function listProcesses() {
  let entries;
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out = [];
  for (const name of entries) {
    if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
    const e = readProcStat(Number(name));
    if (e) out.push(e);
  }
  return out;
}

/** The value of `variable` in the environment `pid` was started with (unreadable, absent: undefined). */
export function environValue(pid, variable) {
  let environ;
  try {
    environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return undefined;
  }
  const prefix = `${variable}=`;
  for (const entry of environ.split('\0')) if (entry.startsWith(prefix)) return entry.slice(prefix.length);
  return undefined;
}

/** Running: not a zombie waiting to be reaped (a reparented one waits for init). */
export const running = (p) => !!p && p.state !== 'Z' && p.state !== 'X';

/**
 * True while any process of group `pgid` still runs (EPERM: it exists but is not ours to signal).
 * Zombies are left out where /proc exists, so "the group is gone" is not delayed by how often init
 * reaps.
 */
export function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return e.code === 'EPERM';
  }
  const all = listProcesses();
  return all ? all.some((p) => p.pgrp === pgid && running(p)) : true;
}

/** Signals the group; false when it is already gone. */
export function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

function signalPid(pid, signal) {
  try {
    process.kill(pid, signal);
  } catch {
    /* gone meanwhile */
  }
}

function markerMatches(marker, value) {
  if (value === undefined) return false;
  return marker.value !== undefined ? value === marker.value : value.startsWith(marker.prefix);
}

/**
 * The running processes of the family (see the header), from one /proc listing; undefined where
 * there is no /proc. `all` lets a caller reuse a listing it has.
 */
export function familyOf({ groups = [], marker, exclude = [] }, all = listProcesses()) {
  if (!all) return undefined;
  const skip = new Set([process.pid, ...exclude]);
  const candidates = all.filter((p) => running(p) && !skip.has(p.pid));
  const inFamily = new Set();
  for (const p of candidates) {
    if (groups.includes(p.pgrp) || (marker && markerMatches(marker, environValue(p.pid, marker.variable)))) inFamily.add(p.pid);
  }
  // Descendants: whoever's parent is in the family, until nothing is added.
  for (let grew = inFamily.size > 0; grew; ) {
    grew = false;
    for (const p of candidates) {
      if (!inFamily.has(p.pid) && inFamily.has(p.ppid)) {
        inFamily.add(p.pid);
        grew = true;
      }
    }
  }
  return candidates.filter((p) => inFamily.has(p.pid));
}

/**
 * Ends the family (invariant 2): 'gone' when nothing of it was there, 'terminated' when SIGTERM was
 * enough, 'killed' when SIGKILL was needed. A caller that is itself a member of a group it ends
 * (the shim) gets the SIGTERM too (it handles it) but never the SIGKILL, and is not waited for.
 * `groupsSignalled`: the groups got SIGTERM already; only the rest of the family gets it now.
 */
export async function endFamily({ groups = [], marker, exclude = [], killAfterMs, giveUpMs = 5000, groupsSignalled = false }) {
  const spec = { groups, marker, exclude };
  const skip = new Set([process.pid, ...exclude]);
  /** pid → start ticks of everything found so far (invariant 1). */
  const known = new Map();
  const stillOurs = () => [...known].filter(([pid, ticks]) => {
    const now = readProcStat(pid);
    return running(now) && now.startTicks === ticks;
  });
  /**
   * Whether `g` has a member other than us. The shim is a member of the group it ends: where
   * there is no /proc that cannot be told apart, so its own group counts as ended once signalled.
   */
  const groupLeft = (g) => {
    if (g !== process.pid) return groupAlive(g);
    const all = listProcesses();
    return !!all && all.some((p) => p.pgrp === g && running(p) && !skip.has(p.pid));
  };
  const anyLeft = () => stillOurs().length > 0 || groups.some(groupLeft);
  /** SIGKILL to a group: member by member when it is our own (we have not finished). */
  const killGroup = (g) => {
    const all = g === process.pid ? listProcesses() : undefined;
    if (!all) return signalGroup(g, 'SIGKILL');
    for (const p of all) if (p.pgrp === g && running(p) && !skip.has(p.pid)) signalPid(p.pid, 'SIGKILL');
    return true;
  };
  /** Finds the family again: what is new is remembered and returned. */
  const discover = () => {
    const found = [];
    for (const p of familyOf(spec) ?? []) {
      if (known.has(p.pid)) continue;
      known.set(p.pid, p.startTicks);
      found.push(p);
    }
    return found;
  };

  // Listed before anything is signalled: once a parent is gone, its child's ancestry is lost.
  const first = discover();
  // Our own group is signalled even when no other member can be seen (no /proc: macOS). Groups
  // that got SIGTERM already (the shim's, from Gaffer) do not get a second one: to many programs
  // a second SIGTERM means "stop now, skip the graceful part".
  const signalled = groupsSignalled ? groups : groups.filter((g) => (g === process.pid || groupLeft(g)) && signalGroup(g, 'SIGTERM'));
  for (const p of first) {
    // A member that left its group (setsid) between the listing and the group's signal missed it.
    if (groups.includes(p.pgrp)) {
      const now = readProcStat(p.pid);
      if (!running(now) || now.startTicks !== p.startTicks || groups.includes(now.pgrp)) continue;
    }
    signalPid(p.pid, 'SIGTERM');
  }
  if (signalled.length === 0 && known.size === 0) return 'gone';
  const killAt = Date.now() + killAfterMs;
  // Whether anything is left is cheap to ask (stat files); listing the family again reads every
  // process's environment, so it is done every REDISCOVER polls only.
  for (let poll = 1; anyLeft(); poll++) {
    if (Date.now() >= killAt) {
      discover();
      for (const g of groups) if (groupLeft(g)) killGroup(g);
      for (const [pid] of stillOurs()) signalPid(pid, 'SIGKILL');
      const end = Date.now() + giveUpMs;
      for (let after = 1; anyLeft() && Date.now() < end; after++) {
        await sleep(POLL_MS);
        if (after % REDISCOVER === 0) for (const p of discover()) signalPid(p.pid, 'SIGKILL');
      }
      return 'killed';
    }
    await sleep(POLL_MS);
    if (poll % REDISCOVER === 0) for (const p of discover()) signalPid(p.pid, 'SIGTERM');
  }
  return 'terminated';
}

/**
 * Calls `fn` once when `stream` (a pipe whose other end a parent holds and never closes on
 * purpose while it lives) ends: the parent exited, however it exited, kill -9 included.
 */
export function onPipeClosed(stream, fn) {
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    fn();
  };
  stream.once('end', once);
  stream.once('close', once);
  stream.once('error', once);
}
