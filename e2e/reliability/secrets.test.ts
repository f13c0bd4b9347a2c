/**
 * Scenario 6b — tokens a command can read, and secrets at rest (issue 25 items 2 and 14;
 * PROTOCOL §17), with real processes started the way a user starts them.
 *
 * Expected outcomes:
 * - headless Gaffer started as `npm start` runs it (`node scripts/start.mjs --headless`) with
 *   GAFFER_OPERATOR_TOKEN exported keeps no token in /proc/<pid>/environ or cmdline;
 * - a `gaffer agent` (`node scripts/gaffer.mjs agent`) with GAFFER_TOKEN and GAFFER_OPERATOR_TOKEN
 *   exported runs a command that reads /proc/<pid>/environ and cmdline of every ancestor, and of
 *   the process the data directory's pid file names (Gaffer): no token anywhere. The same for the
 *   command of a per_task managed agent and of a long_running one (through the shim, whose
 *   command is itself a `gaffer agent`);
 * - no process of the whole tree (Gaffer, its managed agents, the shim, the agents) holds a token
 *   in its environ or cmdline while all of it runs;
 * - the data directory is 0700 and every file in it 0600 (database, WAL, shared memory, lock, pid,
 *   secrets key, log segments); a managed agent's API key is not in the database file or its WAL.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, apiOk, createAgentToken } from './lib/http';
import { figures, until } from './lib/mode';
import { killAllChildren, ROOT, spawnNode, type Proc } from './lib/procs';
import { freePort, newOperatorToken, removeTempDirs, tempDir } from './lib/server';

const linux = process.platform === 'linux';
const GAFFER_BIN = path.join(ROOT, 'scripts', 'gaffer.mjs');
const PROBE = path.join(ROOT, 'e2e', 'reliability', 'lib', 'token-probe.mjs');
const TOKEN_LIKE = /GAFFER_(OPERATOR_)?TOKEN(_FD)?=|gf[to]_[A-Za-z0-9_-]{8,}/;
const API_KEY = 'sk-probe-API-KEY-3e9d71c5';

interface Look {
  pid: number;
  command: string;
  environ: string;
  cmdline: string;
}
interface ProbeReport {
  self: Look;
  ownEnvHasToken: boolean;
  ancestors: Look[];
  gaffer: Look | null;
}

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

/** What /proc shows of `pid` to another process of the same user: a token, or not. */
function exposed(pid: number, values: string[]): string[] {
  const found: string[] = [];
  for (const file of ['environ', 'cmdline']) {
    let text: string;
    try {
      text = fs.readFileSync(`/proc/${pid}/${file}`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    if (TOKEN_LIKE.test(text) || values.some((v) => text.includes(v))) found.push(`${pid} ${file}`);
  }
  return found;
}

/** Every process below this one (children, grandchildren, …). */
function descendants(): Array<{ pid: number; command: string }> {
  const parent = new Map<number, { ppid: number; command: string }>();
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const s = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      parent.set(Number(e), { ppid: Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]), command: s.slice(s.indexOf('(') + 1, s.lastIndexOf(')')) });
    } catch {
      /* gone */
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parent.get(pid)?.ppid, hops = 0; p !== undefined && hops < 64; p = parent.get(p)?.ppid, hops++) if (p === process.pid) return true;
    return false;
  };
  return [...parent.entries()].filter(([pid]) => below(pid)).map(([pid, { command }]) => ({ pid, command }));
}

/** The report a task's probe command wrote as the task's output. */
async function probeTask(port: number, operator: string, role: string, pidFile: string): Promise<ProbeReport> {
  const id = (await apiOk(port, operator, 'POST', '/tasks', { title: `probe ${role}`, role, payload: { pidFile } })).json.task.id as number;
  let task: any;
  await until(async () => {
    task = (await api(port, operator, 'GET', `/tasks/${id}`)).json.task;
    return task?.status === 'done' || task?.status === 'failed';
  }, `the ${role} probe task to finish`, 60_000, 100);
  expect(task.status, JSON.stringify(task)).toBe('done');
  return task.output as ProbeReport;
}

function expectNoToken(report: ProbeReport, who: string): void {
  expect(report.ownEnvHasToken, `${who}: the command's own environment`).toBe(false);
  const exposedAncestors = [...report.ancestors, report.gaffer!].filter((l) => l.environ !== 'clean' || l.cmdline !== 'clean');
  // Every ancestor was readable (same user) and clean; none was skipped as unreadable.
  expect(exposedAncestors, `${who}: ancestors ${JSON.stringify(report.ancestors.map((a) => `${a.pid} ${a.command}`))}`).toEqual([]);
}

async function waitOutput(p: Proc, re: RegExp, what: string): Promise<void> {
  await until(() => re.test(p.output()) || !p.alive(), what, 60_000, 50);
  if (!re.test(p.output())) throw new Error(`${what}: exited first:\n${p.output().slice(-3000)}`);
}

describe.skipIf(!linux)('tokens a command can read, secrets at rest (PROTOCOL §17)', () => {
  it('no token in any environ or cmdline of Gaffer, gaffer agent, managed agents and their commands; a private data directory', async () => {
    const dir = tempDir('secrets');
    const data = path.join(dir, 'data');
    const port = await freePort();
    const operator = newOperatorToken();
    const agentUrl = `ws://127.0.0.1:${port}/agent`;
    // As `npm start -- --headless` runs it (the console from elsewhere, so only the server bundle is built).
    const gaffer = spawnNode([path.join(ROOT, 'scripts', 'start.mjs'), '--headless', '--port', String(port), '--data-dir', data], {
      env: { GAFFER_OPERATOR_TOKEN: operator, GAFFER_RENDERER_DIR: path.join(dir, 'no-renderer') },
    });
    await gaffer.waitFor(/^gaffer: agents connect to ws:\/\/127\.0\.0\.1:\d+\/agent/, 180_000);
    expect(exposed(gaffer.pid, [operator])).toEqual([]);
    const pidFile = path.join(data, 'gaffer.pid');
    expect(Number(fs.readFileSync(pidFile, 'utf8'))).toBe(gaffer.pid);

    // A plain `gaffer agent`, both tokens exported to it.
    const { token } = await createAgentToken(port, operator, 'probe', 'probe');
    const agent = spawnNode([GAFFER_BIN, 'agent', '--url', agentUrl, '--role', 'probe', '--poll-s', '0.2', '--', process.execPath, PROBE], {
      env: { GAFFER_TOKEN: token, GAFFER_OPERATOR_TOKEN: operator },
    });
    await waitOutput(agent, /connected as inst_/, 'the gaffer agent to connect');
    expect(agent.output()).not.toMatch(/warning/);
    expect(exposed(agent.pid, [token, operator])).toEqual([]);
    const fromAgent = await probeTask(port, operator, 'probe', pidFile);
    expect(fromAgent.ancestors[0]).toMatchObject({ pid: agent.pid });
    expect(fromAgent.gaffer).toMatchObject({ pid: gaffer.pid });
    expectNoToken(fromAgent, 'gaffer agent');

    // Managed agents: per_task (Gaffer runs `gaffer agent` around the probe) and long_running
    // (the shim runs a command that is itself a `gaffer agent`).
    await apiOk(port, operator, 'POST', '/managed-agents', { name: 'pt', role: 'probe-pt', command: [process.execPath, PROBE], env: { PROBE_API_KEY: API_KEY } });
    await apiOk(port, operator, 'POST', '/managed-agents', {
      name: 'lr',
      role: 'probe-lr',
      mode: 'long_running',
      command: [process.execPath, GAFFER_BIN, 'agent', '--role', 'probe-lr', '--poll-s', '0.2', '--', process.execPath, PROBE],
    });
    const perTask = await probeTask(port, operator, 'probe-pt', pidFile);
    expectNoToken(perTask, 'per_task managed agent');
    expect(perTask.ancestors.map((a) => a.pid)).toContain(gaffer.pid);
    const longRunning = await probeTask(port, operator, 'probe-lr', pidFile);
    expectNoToken(longRunning, 'long_running managed agent');
    expect(longRunning.ancestors.map((a) => a.command).slice(0, 3)).toEqual(['node', 'node', 'node']); // gaffer agent, shim, Gaffer

    // The whole tree at once, by value and by shape, while everything runs.
    const tree = descendants();
    expect(tree.length).toBeGreaterThanOrEqual(4); // Gaffer, the agent, two managed processes (and the lr agent)
    expect(tree.flatMap((p) => exposed(p.pid, [operator, token]))).toEqual([]);

    // PROTOCOL §17: 0700 / 0600; item 14: the API key is sealed.
    const files: string[] = [];
    const bad: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        const mode = fs.statSync(p).mode & 0o777;
        files.push(p);
        if (mode !== (e.isDirectory() ? 0o700 : 0o600)) bad.push(`${path.relative(data, p)} ${mode.toString(8)}`);
        if (e.isDirectory()) walk(p);
      }
    };
    expect(fs.statSync(data).mode & 0o777).toBe(0o700);
    walk(data);
    expect(bad).toEqual([]);
    for (const f of ['gaffer.db', 'gaffer.db-wal', 'gaffer.db-shm', 'gaffer.lock', 'gaffer.pid', 'secrets.key']) expect(fs.existsSync(path.join(data, f)), f).toBe(true);
    expect(fs.readdirSync(path.join(data, 'logs')).some((f) => f.startsWith('seg-'))).toBe(true);
    const raw = ['gaffer.db', 'gaffer.db-wal'].map((f) => fs.readFileSync(path.join(data, f)).toString('latin1')).join('');
    expect(raw).not.toContain(API_KEY);
    expect((await apiOk(port, operator, 'GET', '/managed-agents/pt')).json.managedAgent.env).toEqual({ PROBE_API_KEY: API_KEY });

    figures('secrets', {
      ancestorsRead: [fromAgent, perTask, longRunning].reduce((n, r) => n + r.ancestors.length + 1, 0),
      processesInTree: tree.length,
      dataDirEntries: files.length,
      tokensFound: 0,
    });
    agent.signal('SIGTERM');
    gaffer.signal('SIGTERM');
    expect((await gaffer.exited).code).toBe(0);
    await agent.exited;
  });
});
