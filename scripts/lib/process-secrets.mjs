/**
 * How a Gaffer process receives its tokens and hands them on (PROTOCOL §17): never in an
 * environment or a command line that another process of the same user can read after start-up.
 *
 * Plain JavaScript (node:* only), because the launchers (scripts/gaffer.mjs, start.mjs,
 * managed-shim.mjs) must run it before anything else starts — before tsx's esbuild service, the
 * Electron child, a build, or any command is spawned with this process's environment.
 *
 * Invariants:
 * 1. `takeProcessSecrets()` runs once per process (later calls, from any copy of this module,
 *    return the same values): each token comes from a hand-off — `NAME_FD` (an inherited pipe, read
 *    to its end, then closed) or `NAME_FILE` (a 0600 file, deleted once read) — or else from
 *    `NAME` in the environment; every `NAME`, `NAME_FD`, `NAME_FILE` and any variable whose value
 *    contains a token is removed from `process.env`, so no child started afterwards inherits them.
 * 2. Linux: `/proc/<pid>/environ` shows the memory holding the environment the process was
 *    started with — removing a variable from `process.env` does not change it. So the entries
 *    removed in 1 are overwritten with NUL bytes in that memory (through /proc/self/mem), and the
 *    result is read back: `cleared.ok` is true only when no token is left in /proc/self/environ.
 *    Node 20 has no execve, and a re-exec by spawning would leave the original process — the
 *    parent, with the old environment — alive; overwriting in place keeps one process (same pid,
 *    same process group, same terminal) with a clean environ.
 * 3. Tokens travel to children only as `NAME_FD=<n>` plus a pipe on fd n (`secretPipes`), written
 *    once and closed — for a child that is one of Gaffer's own Node programs, started directly —
 *    or as `NAME_FILE` naming a 0600 file in a 0700 directory (`secretFiles`) — for a command of
 *    the user's, which may be a wrapper (`npx tsx agent.ts`, `sh -c`): a variable passes through
 *    wrappers, while fd 3 of the process that finally reads it may be something else entirely
 *    (tsx's IPC channel). Nothing else about them is in the child's environment or argv.
 * 4. Nothing here prints: callers decide what to say (`exposedAncestors` names the processes that
 *    still hold a token — an `npm`/`npx` wrapper keeps the environment it was started with).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** The environment variables that carry Gaffer tokens. */
export const TOKEN_VARIABLES = Object.freeze(['GAFFER_TOKEN', 'GAFFER_OPERATOR_TOKEN']);
/** Tokens shorter than this are not searched for inside other variables (too many false hits). */
const MIN_SECRET_LENGTH = 8;
const CACHE = Symbol.for('gaffer.processSecrets');
const FD_READ_TIMEOUT_MS = 10_000;

export const fdVariable = (name) => `${name}_FD`;
export const fileVariable = (name) => `${name}_FILE`;
const handOffVariables = (name) => [name, fdVariable(name), fileVariable(name)];

/** Invariant 1: the tokens this process was given; see the .d.mts for the shape. */
export function takeProcessSecrets(env = process.env) {
  const cached = globalThis[CACHE];
  if (cached) return cached;
  const tokens = {};
  const from = {};
  const problems = [];
  for (const name of TOKEN_VARIABLES) {
    const fdName = fdVariable(name);
    const fileName = fileVariable(name);
    if (env[fdName] !== undefined) {
      const r = readHandOff(env[fdName]);
      if (r.ok) [tokens[name], from[name]] = [r.value, 'pipe'];
      else problems.push(`${fdName}=${env[fdName]}: ${r.reason}`);
    }
    if (tokens[name] === undefined && env[fileName] !== undefined) {
      const r = readHandOffFile(env[fileName]);
      if (r.ok) [tokens[name], from[name]] = [r.value, 'file'];
      else problems.push(`${fileName}=${env[fileName]}: ${r.reason}`);
    }
    if (tokens[name] === undefined && env[name]) [tokens[name], from[name]] = [env[name], 'environment'];
  }
  const values = Object.values(tokens).filter((v) => v.length >= MIN_SECRET_LENGTH);
  const removed = new Set();
  for (const [k, v] of Object.entries(env)) {
    const named = TOKEN_VARIABLES.some((n) => handOffVariables(n).includes(k));
    if (named || (v !== undefined && values.some((s) => v.includes(s)))) removed.add(k);
  }
  for (const k of removed) delete env[k];
  const cleared = env === process.env ? clearStartupEnvironment(removed, values) : { ok: true, reason: null };
  const result = Object.freeze({ tokens: Object.freeze(tokens), from: Object.freeze(from), cleared, problems: Object.freeze(problems) });
  if (env === process.env) globalThis[CACHE] = result;
  return result;
}

/** Reads a hand-off pipe to its end and closes it (invariant 1). */
function readHandOff(raw) {
  const fd = Number(raw);
  if (!/^\d+$/.test(raw) || fd < 3) return { ok: false, reason: 'not a file descriptor (a whole number, 3 or more)' };
  const chunks = [];
  const buf = Buffer.alloc(4096);
  const deadline = Date.now() + FD_READ_TIMEOUT_MS;
  try {
    for (;;) {
      let n;
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null);
      } catch (e) {
        // A non-blocking pipe whose writer has not written yet.
        if (e.code !== 'EAGAIN' || Date.now() > deadline) throw e;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
        continue;
      }
      if (n === 0) break;
      chunks.push(Buffer.from(buf.subarray(0, n)));
    }
  } catch (e) {
    return { ok: false, reason: `cannot read it (${e.code ?? e.message})` };
  } finally {
    try {
      fs.closeSync(fd);
    } catch {
      /* not open: the read said why */
    }
  }
  const value = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  return value ? { ok: true, value } : { ok: false, reason: 'it was empty' };
}

/** Reads a hand-off file and deletes it (invariant 1): it is a hand-off, not a place to keep a token. */
function readHandOffFile(file) {
  let value;
  try {
    const st = fs.statSync(file);
    if (!st.isFile() || st.size > 64 * 1024) return { ok: false, reason: 'not a token file' };
    value = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (e) {
    return { ok: false, reason: `cannot read it (${e.code ?? e.message})` };
  }
  try {
    fs.rmSync(file, { force: true });
  } catch {
    /* read; deleting it is its maker's to retry (secretFiles' cleanup) */
  }
  return value ? { ok: true, value } : { ok: false, reason: 'it was empty' };
}

/** `stat` fields 50 and 51 (proc(5)): where the start-up environment lies in this process's memory. */
function environmentBounds() {
  const stat = fs.readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3
  const start = Number(fields[50 - 3]);
  const end = Number(fields[51 - 3]);
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start) throw new Error('no environment bounds in /proc/self/stat');
  return { start, end };
}

/** Invariant 2. `names`: the variables to blank; `values`: what must not be left. */
export function clearStartupEnvironment(names, values) {
  if (names.size === 0) return { ok: true, reason: null };
  if (process.platform !== 'linux') return { ok: false, unsupported: true, reason: `not Linux (${process.platform}): the start-up environment cannot be overwritten here` };
  let mem;
  try {
    const { start, end } = environmentBounds();
    const block = fs.readFileSync('/proc/self/environ');
    if (block.length !== end - start) throw new Error('/proc/self/environ does not match its bounds');
    mem = fs.openSync('/proc/self/mem', 'r+');
    for (let at = 0; at < block.length; ) {
      let stop = block.indexOf(0, at);
      if (stop < 0) stop = block.length;
      const entry = block.subarray(at, stop).toString('utf8');
      const eq = entry.indexOf('=');
      if (eq > 0 && names.has(entry.slice(0, eq))) {
        const zeros = Buffer.alloc(stop - at);
        fs.writeSync(mem, zeros, 0, zeros.length, start + at);
      }
      at = stop + 1;
    }
  } catch (e) {
    return { ok: false, reason: `cannot overwrite the start-up environment (${e.code ?? e.message})` };
  } finally {
    if (mem !== undefined) fs.closeSync(mem);
  }
  const after = fs.readFileSync('/proc/self/environ');
  const left = [...names].filter((n) => after.includes(`${n}=`));
  if (left.length > 0 || values.some((v) => after.includes(v))) return { ok: false, reason: 'a token is still in /proc/self/environ after overwriting it' };
  return { ok: true, reason: null };
}

/**
 * The tokens to hand on (`secrets` entries with a value), and `env` without any token variable (in
 * any of its hand-off forms) or any variable holding a token's value: the child's environment.
 */
function tokenFreeEnv(secrets, env) {
  const entries = Object.entries(secrets).filter(([, v]) => typeof v === 'string' && v.length > 0);
  const values = entries.map(([, v]) => v).filter((v) => v.length >= MIN_SECRET_LENGTH);
  const childEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || TOKEN_VARIABLES.some((n) => handOffVariables(n).includes(k)) || values.some((s) => v.includes(s))) continue;
    childEnv[k] = v;
  }
  return { entries, childEnv };
}

/**
 * Invariant 3: spawn options that hand `secrets` ({NAME: value}) to a child over pipes on fds 3,
 * 4, … (`NAME_FD` in its environment), and `send(child)` to write them once the child exists.
 * `stdio` must list exactly fds 0–2.
 */
export function secretPipes(secrets, stdio, env) {
  const { entries, childEnv } = tokenFreeEnv(secrets, env);
  entries.forEach(([name], i) => (childEnv[fdVariable(name)] = String(3 + i)));
  return {
    stdio: [...stdio, ...entries.map(() => 'pipe')],
    env: childEnv,
    send(child) {
      const sent = entries.map(([, value], i) => {
        const pipe = child.stdio[3 + i];
        if (!pipe) return Promise.resolve();
        return new Promise((resolve) => {
          pipe.once('error', () => resolve()); // the child died before reading: nothing to hand over
          pipe.end(value, () => resolve());
        });
      });
      return Promise.all(sent).then(() => {});
    },
  };
}

/**
 * Invariant 3, for a command of the user's: the environment for it (`NAME_FILE` naming a 0600 file
 * in a fresh 0700 directory, for each token) and `cleanup()`, which removes what the command did not
 * take (call it when the command has exited).
 */
export function secretFiles(secrets, env) {
  const { entries, childEnv } = tokenFreeEnv(secrets, env);
  if (entries.length === 0) return { env: childEnv, cleanup() {} };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-token-'));
  fs.chmodSync(dir, 0o700);
  for (const [name, value] of entries) {
    const file = path.join(dir, name.toLowerCase());
    fs.writeFileSync(file, value, { mode: 0o600, flag: 'wx' });
    childEnv[fileVariable(name)] = file;
  }
  return { env: childEnv, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Invariant 4: this process's ancestors whose environment or command line (as /proc shows them)
 * still contains one of `values`. Linux only (elsewhere: empty); processes of other users are
 * unreadable and skipped.
 */
export function exposedAncestors(values) {
  const found = [];
  const secrets = values.filter((v) => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH);
  if (process.platform !== 'linux' || secrets.length === 0) return found;
  for (let pid = process.ppid, hops = 0; pid > 1 && hops < 64; hops++) {
    let stat;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      break;
    }
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    for (const where of ['environ', 'cmdline']) {
      let text;
      try {
        text = fs.readFileSync(`/proc/${pid}/${where}`, 'utf8');
      } catch {
        continue;
      }
      if (secrets.some((s) => text.includes(s))) found.push({ pid, command, where });
    }
    pid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return found;
}

/**
 * What a process that took its tokens should warn about, one line each: hand-offs that failed, a
 * start-up environment that could not be cleared (Linux), ancestors still holding a token.
 */
export function secretWarnings(secrets) {
  const lines = [...secrets.problems];
  if (!secrets.cleared.ok && !secrets.cleared.unsupported) lines.push(`${secrets.cleared.reason}: a process started by this one could read the token in /proc/${process.pid}/environ`);
  for (const f of exposedAncestors(Object.values(secrets.tokens))) {
    lines.push(
      `process ${f.pid} (${f.command}) still holds a Gaffer token in its ${f.where === 'environ' ? 'environment' : 'command line'}, ` +
        'readable by any process of this user for as long as it runs: start Gaffer programs without a wrapper that keeps the token (npx, npm) — docs/command-agent.md, "What a command can read"',
    );
  }
  return lines;
}
