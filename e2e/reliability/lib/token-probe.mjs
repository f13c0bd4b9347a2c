#!/usr/bin/env node
/**
 * The command of the secrets scenario (secrets.test.ts), run by a `gaffer agent` or a managed
 * agent: it does what a command that wants a token would do (issue 25 item 2) — reads
 * /proc/<pid>/environ and /proc/<pid>/cmdline of every ancestor, and of the process the data
 * directory's pid file names (payload `pidFile`) — and writes to GAFFER_OUTPUT_FILE, for each,
 * whether anything that looks like a Gaffer token is there.
 */
import fs from 'node:fs';
import process from 'node:process';

const TOKEN = /GAFFER_(OPERATOR_)?TOKEN(_FD)?=|gf[to]_[A-Za-z0-9_-]{8,}/;
const doc = JSON.parse(fs.readFileSync(process.env.GAFFER_PAYLOAD_FILE, 'utf8'));
const payload = doc.payload ?? {};

function stat(pid) {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return { command: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')), ppid: Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]) };
  } catch {
    return undefined;
  }
}

function look(pid) {
  const where = (file) => {
    try {
      return TOKEN.test(fs.readFileSync(`/proc/${pid}/${file}`, 'latin1')) ? 'token' : 'clean';
    } catch (e) {
      return `unreadable (${e.code})`;
    }
  };
  return { pid, command: stat(pid)?.command ?? '?', environ: where('environ'), cmdline: where('cmdline') };
}

const ancestors = [];
for (let pid = process.ppid; pid > 1 && ancestors.length < 64; pid = stat(pid)?.ppid ?? 0) ancestors.push(look(pid));
const gafferPid = payload.pidFile ? Number(fs.readFileSync(payload.pidFile, 'utf8').trim()) : undefined;
const report = {
  self: look(process.pid),
  ownEnvHasToken: Object.entries(process.env).some(([k, v]) => TOKEN.test(`${k}=${v}`)),
  ancestors,
  gaffer: gafferPid ? look(gafferPid) : null,
};
console.log(`looked at ${ancestors.length} ancestors`);
fs.writeFileSync(process.env.GAFFER_OUTPUT_FILE, JSON.stringify(report));
