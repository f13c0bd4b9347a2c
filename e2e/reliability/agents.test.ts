/**
 * Scenario 2 — agents killed, frozen and disconnected (real headless server, agents as separate
 * OS processes where the OS has to do the damage).
 *
 * Expected outcomes:
 * - frozen (SIGSTOP past the lock window, then SIGCONT): the watchdog expires the frozen agent's
 *   lock, another agent claims the task (attempt 2, previouslyExpired) and finishes it; the frozen
 *   agent's late report is refused by the fence (409 not_holder, audited as lock.reject); the task
 *   is done exactly once, by the second agent.
 * - frozen while inside the SDK's work loop: on waking, its renewal or its report is refused, it
 *   never overwrites the other agent's result.
 * - killed (SIGKILL mid-task): the lock is released after the reconnect grace, and the task is
 *   finished by another agent within grace + sweep (+ slack).
 * - disconnect/reconnect storms (many agents dropping, closing and reopening sockets, raw clients
 *   abandoning claims, resuming, reporting with stale fences): no task ever has two holders, every
 *   task is done exactly once, no acknowledged write is lost.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LoadAgent } from './lib/agents';
import { api, apiOk, createAgentToken } from './lib/http';
import { assertNoProblems, checkDatabaseFile, newLedger } from './lib/invariants';
import { figures, pick, rngFor, sleep, until } from './lib/mode';
import { killAllChildren, spawnAgentProc } from './lib/procs';
import { freePort, newOperatorToken, startServer, tempDir, type Server, removeTempDirs } from './lib/server';
import { RawAgent } from './lib/wire';
import { openDatabase } from '../../src-main/core/db/open';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

async function server(label: string, timings: { lockWindowS: number; heartbeatTimeoutS: number; sweepIntervalS: number; reconnectGraceS: number; heartbeatIntervalMs?: number }): Promise<Server> {
  return startServer({ dataDir: tempDir(label), port: await freePort(), operatorToken: newOperatorToken(), idempotencyWindowS: 3600, ...timings });
}

async function createTask(s: Server, title: string): Promise<number> {
  const r = await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title, role: 'dev' });
  return r.json.task.id as number;
}

interface AuditRow {
  id: number;
  type: string;
  actor: string;
  subject: string;
  detail: Record<string, unknown>;
}

async function taskAudit(s: Server, taskId: number): Promise<AuditRow[]> {
  const r = await apiOk(s.port, s.operatorToken, 'GET', `/audit?subject=task:${taskId}&limit=1000`);
  return (r.json.items as Array<AuditRow & { detail: Record<string, unknown> }>).map((e) => ({ id: e.id, type: e.type, actor: e.actor, subject: e.subject, detail: e.detail }));
}

describe('a frozen agent (SIGSTOP past the lock window, then SIGCONT)', () => {
  it('its late report is refused by the fence (409 not_holder); the task is done exactly once, by the other agent', async () => {
    const s = await server('sigstop', { lockWindowS: 2, heartbeatTimeoutS: 60, sweepIntervalS: 0.25, reconnectGraceS: 10 });
    const taskId = await createTask(s, 'frozen-holder task');
    const frozen = await spawnAgentProc(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'frozen', 'dev')).token, 'frozen');
    frozen.send({ cmd: 'claim' });
    const claimed = await frozen.waitEvent((e) => e.ev === 'claimed', 'claim');
    expect(claimed).toMatchObject({ taskId, fence: 1, attempt: 1 });
    // The agent will report in 300 ms of its own time — but it is frozen first.
    frozen.send({ cmd: 'report', taskId, fence: 1, status: 'done', afterMs: 300 });
    await sleep(50);
    frozen.signal('SIGSTOP');
    const frozenAt = Date.now();

    // The watchdog expires the lock after the window; nothing heard from the frozen agent.
    await until(async () => (await taskAudit(s, taskId)).some((e) => e.type === 'lock.expire'), 'lock expiry', 10_000, 50);
    const expiredAfterMs = Date.now() - frozenAt;
    const other = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'other', 'dev')).token, 'dev', 'other');
    const c = await other.request('claim');
    expect(c.ok).toBe(true);
    expect(c.result.task).toMatchObject({ id: taskId, attempt: 2, previouslyExpired: true });
    expect(c.result.lock.fence).toBe(2);
    const done = await other.request('report', { taskId, fence: 2, status: 'done', output: { by: 'other' } });
    expect(done.ok).toBe(true);

    frozen.signal('SIGCONT');
    const late = await frozen.waitEvent((e) => e.ev === 'refused' || e.ev === 'reported' || e.ev === 'failed', 'the late report');
    expect(late).toMatchObject({ ev: 'refused', code: 'not_holder', status: 409, taskId, fence: 1 });

    const audit = await taskAudit(s, taskId);
    const releases = audit.filter((e) => e.type === 'lock.release');
    expect(releases).toHaveLength(1);
    expect(releases[0]).toMatchObject({ actor: other.instanceId, detail: { fence: 2, to: 'done' } });
    expect(audit.filter((e) => e.type === 'lock.reject')).toEqual([
      expect.objectContaining({ actor: frozen.instanceId, detail: expect.objectContaining({ op: 'report', fence: 1, code: 'not_holder' }) }),
    ]);
    const task = (await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${taskId}`)).json.task;
    expect(task).toMatchObject({ status: 'done', output: { by: 'other' }, attempt: 2 });

    await other.close();
    await frozen.kill9();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the frozen-agent scenario');
    figures('sigstop', { lockWindowS: 2, expiredAfterMs, lateReport: `${late.code}/${late.status}` });
  }, 60_000);

  it('frozen inside the SDK work loop: on waking its renewal or report is refused and the other agent\'s result stands', async () => {
    const s = await server('sigstop-work', { lockWindowS: 2, heartbeatTimeoutS: 60, sweepIntervalS: 0.25, reconnectGraceS: 10 });
    const taskId = await createTask(s, 'frozen worker task');
    const frozen = await spawnAgentProc(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'frozen-w', 'dev')).token, 'frozen-w');
    frozen.send({ cmd: 'work', holdMs: 1200 });
    await frozen.waitEvent((e) => e.ev === 'working', 'the handler to start');
    frozen.signal('SIGSTOP');
    await until(async () => (await taskAudit(s, taskId)).some((e) => e.type === 'lock.expire'), 'lock expiry', 10_000, 50);
    const other = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'other-w', 'dev')).token, 'dev', 'other-w');
    const c = await other.request('claim');
    expect(c.result.lock.fence).toBe(2);
    expect((await other.request('report', { taskId, fence: 2, status: 'done', output: { by: 'other-w' } })).ok).toBe(true);
    frozen.signal('SIGCONT');
    await frozen.waitEvent((e) => e.ev === 'work_done', 'the work loop to end');
    const evs = frozen.events();
    // The SDK learned that the lock was gone (renew refused → lost) or its report was refused.
    const learned = evs.some((e) => e.ev === 'task.lost') || evs.some((e) => e.ev === 'log' && /report refused|lock is no longer ours/.test(String(e.msg)));
    expect(learned, JSON.stringify(evs)).toBe(true);
    expect(evs.some((e) => e.ev === 'task.reported')).toBe(false);
    const audit = await taskAudit(s, taskId);
    expect(audit.filter((e) => e.type === 'lock.release')).toEqual([expect.objectContaining({ actor: other.instanceId, detail: expect.objectContaining({ fence: 2, to: 'done' }) })]);
    expect(audit.filter((e) => e.type === 'lock.reject').length).toBeGreaterThanOrEqual(1);
    expect((await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${taskId}`)).json.task.output).toEqual({ by: 'other-w' });
    await other.close();
    await frozen.kill9();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the frozen-worker scenario');
  }, 60_000);
});

describe('a killed agent (SIGKILL mid-task)', () => {
  it('its lock is released after the reconnect grace and another agent finishes the task', async () => {
    const grace = 1;
    const sweep = 0.25;
    const s = await server('agent-kill', { lockWindowS: 60, heartbeatTimeoutS: 60, sweepIntervalS: sweep, reconnectGraceS: grace });
    const taskId = await createTask(s, 'killed-holder task');
    const victim = await spawnAgentProc(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'victim', 'dev')).token, 'victim');
    victim.send({ cmd: 'work', holdMs: 600_000 });
    await victim.waitEvent((e) => e.ev === 'working', 'the handler to start');
    const other = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'heir', 'dev')).token, 'dev', 'heir');
    expect((await other.request('claim')).result.task).toBeNull(); // P2: held, so nothing to claim
    await victim.kill9();
    const killedAt = Date.now();
    const c = await until(
      async () => {
        const r = await other.request('claim');
        return r.ok && r.result.task ? r : undefined;
      },
      'the task to be claimable again',
      15_000,
      25,
    );
    const recoveredMs = Date.now() - killedAt;
    expect(c.result.task).toMatchObject({ id: taskId, attempt: 2, previouslyExpired: true });
    expect((await other.request('report', { taskId, fence: c.result.lock.fence, status: 'done' })).ok).toBe(true);
    // Recovery bound for a dead agent's socket: reconnect grace + one sweep (+ slack for a loaded CI box).
    expect(recoveredMs).toBeLessThan((grace + sweep) * 1000 + 3000);
    const expiry = (await taskAudit(s, taskId)).find((e) => e.type === 'lock.expire');
    expect(expiry?.detail).toMatchObject({ holder: victim.instanceId, reason: 'disconnected' });
    await other.close();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the killed-agent scenario');
    figures('agent-kill9', { reconnectGraceS: grace, sweepIntervalS: sweep, recoveredMs });
  }, 60_000);
});

describe('disconnect/reconnect storms', () => {
  it('many agents dropping, closing and reopening sockets: no double holder, every task done exactly once, nothing acknowledged lost', async () => {
    const t0 = Date.now();
    const rng = rngFor('storm');
    const s = await server('storm', { lockWindowS: 4, heartbeatTimeoutS: 20, sweepIntervalS: 0.25, reconnectGraceS: 1, heartbeatIntervalMs: 1000 });
    const tasksN = pick(600, 3000);
    const initial = Math.floor(tasksN / 4);
    await Promise.all(Array.from({ length: initial }, (_, k) => createTask(s, `storm task ${k}`)));
    const ledger = newLedger();
    const problems: string[] = [];
    const sdkN = pick(16, 40);
    const rawN = pick(8, 24);
    const stormMs = pick(8_000, 40_000);
    const tokens = await Promise.all(Array.from({ length: sdkN + rawN + 8 }, (_, i) => createAgentToken(s.port, s.operatorToken, `storm-${i}`, 'dev')));
    let nextToken = 0;
    const token = () => tokens[nextToken++ % tokens.length]!.token;

    const sdk: LoadAgent[] = [];
    const startSdk = async (i: number) => {
      const a = await LoadAgent.start({ url: s.agentUrl, token: token(), role: 'dev', name: `s${i}`, ledger, rng: rng.fork(100 + i), problems, backlogEvery: 7, reconnect: { initialDelayMs: 20, maxDelayMs: 200 } });
      a.startWorking(1, [0, 30]);
      return a;
    };
    for (let i = 0; i < sdkN; i++) sdk.push(await startSdk(i));

    // Raw chaos clients: claim, then one of: report, abandon (terminate), resume and report,
    // report with a stale fence, close cleanly while holding.
    const counts = { drops: 0, reopen: 0, abandoned: 0, resumedReports: 0, staleRefused: 0, rawDone: 0 };
    let storming = true;
    const raw = Array.from({ length: rawN }, (_, i) =>
      (async () => {
        const r = rng.fork(200 + i);
        const tok = token();
        while (storming) {
          let a: RawAgent;
          try {
            a = await RawAgent.hello(s.agentUrl, tok, 'dev', `raw${i}`);
          } catch {
            await sleep(20);
            continue;
          }
          const c = await a.request('claim');
          if (!c.ok || !c.result.task) {
            a.kill();
            await sleep(r.int(5, 40));
            continue;
          }
          const taskId = c.result.task.id as number;
          const fence = c.result.lock.fence as number;
          ledger.claims.push({ taskId, fence, instanceId: a.instanceId });
          const move = r.int(0, 4);
          if (move === 0) {
            const rep = await a.request('report', { taskId, fence, status: 'done' });
            if (rep.ok) {
              ledger.reports.push({ taskId, fence, status: 'done', instanceId: a.instanceId });
              counts.rawDone++;
            }
            a.kill();
          } else if (move === 1) {
            a.kill(); // abandoned: the grace, then the watchdog, give it back
            counts.abandoned++;
          } else if (move === 2) {
            // Drop, then resume the same instance on a new socket and report.
            const id = a.instanceId;
            a.kill();
            await sleep(r.int(0, 50));
            try {
              const b = await RawAgent.hello(s.agentUrl, tok, 'dev', `raw${i}`, { instanceId: id });
              const rep = await b.request('report', { taskId, fence, status: 'done' });
              if (rep.ok) {
                ledger.reports.push({ taskId, fence, status: 'done', instanceId: b.instanceId });
                counts.resumedReports++;
              } else if (rep.error?.code !== 'not_holder') problems.push(`resumed report refused with ${JSON.stringify(rep.error)}`);
              b.kill();
            } catch {
              /* server refused the socket: fine */
            }
          } else if (move === 3) {
            const stale = await a.request('report', { taskId, fence: fence - 1 || fence + 1, status: 'done' });
            if (stale.ok) problems.push(`a report with a stale fence for task ${taskId} was accepted`);
            else counts.staleRefused++;
            const rep = await a.request('report', { taskId, fence, status: 'backlog' });
            if (rep.ok) ledger.reports.push({ taskId, fence, status: 'backlog', instanceId: a.instanceId });
            await a.close();
          } else {
            await a.close(); // a clean close while holding: grace, then expiry
            counts.abandoned++;
          }
          await sleep(r.int(0, 30));
        }
      })(),
    );

    // The board is fed during the whole storm, so claims and reports happen throughout it.
    const stormEnd = Date.now() + stormMs;
    const feeder = (async () => {
      for (let made = initial; made < tasksN; ) {
        const n = Math.min(20, tasksN - made);
        await Promise.all(Array.from({ length: n }, (_, k) => createTask(s, `storm task ${made + k}`)));
        made += n;
        await sleep(Math.max(10, (stormEnd - Date.now()) / Math.max(1, (tasksN - made) / 20)));
      }
    })();
    // The storm: drop random SDK agents' sockets (they reconnect and resume), close some for good
    // and start new ones in their place.
    const srng = rng.fork(999);
    while (Date.now() < stormEnd) {
      const i = srng.int(0, sdk.length - 1);
      if (srng.chance(0.15)) {
        const old = sdk[i]!;
        sdk[i] = await startSdk(1000 + counts.reopen);
        void old.close();
        counts.reopen++;
      } else {
        // A network drop: the SDK's socket dies without a close frame.
        const conn = (sdk[i]!.agent as unknown as { conn: { ws?: { terminate(): void } } }).conn;
        conn.ws?.terminate();
        counts.drops++;
      }
      await sleep(srng.int(5, 40));
    }
    await feeder;
    storming = false;
    await Promise.all(raw);

    const status = await until(
      async () => {
        const st = await apiOk(s.port, s.operatorToken, 'GET', '/status');
        const t = st.json.counts.tasks as Record<string, number>;
        return t.backlog === 0 && t.in_progress === 0 ? t : undefined;
      },
      'every storm task done',
      60_000,
      200,
    );
    await Promise.all(sdk.map((a) => a.close()));
    expect(status.done).toBe(tasksN);
    // Each task was released to done exactly once: the API's audit count (lock.release rows whose
    // detail says "to":"done") agrees, before the database file is checked row by row below.
    const dones = await api(s.port, s.operatorToken, 'GET', `/audit/count?type=lock.release&text=${encodeURIComponent('"to":"done"')}`);
    expect(dones.status).toBe(200);
    expect(dones.json).toEqual({ count: tasksN, exact: true });
    await s.stop();
    const db = openDatabase(s.dbPath, { readonly: true });
    try {
      const perTask = db.prepare(`SELECT subject, count(*) AS n FROM audit WHERE type = 'lock.release' AND json_extract(detail, '$.to') = 'done' GROUP BY subject HAVING n != 1`).all();
      expect(perTask).toEqual([]);
      const doneRows = (db.prepare(`SELECT count(*) AS n FROM audit WHERE type = 'lock.release' AND json_extract(detail, '$.to') = 'done'`).get() as { n: number }).n;
      expect(doneRows).toBe(tasksN);
    } finally {
      db.close();
    }
    const check = checkDatabaseFile(path.join(s.dataDir, 'gaffer.db'), ledger);
    assertNoProblems(check.problems, 'after the storm');
    expect(problems).toEqual([]);
    const stats = sdk.map((a) => a.stats);
    figures('storm', {
      tasks: tasksN,
      sdkAgents: sdkN,
      rawAgents: rawN,
      drops: counts.drops,
      reopened: counts.reopen,
      abandoned: counts.abandoned,
      resumedReports: counts.resumedReports,
      staleRefused: counts.staleRefused,
      sdkResumes: stats.reduce((n, x) => n + x.resumed, 0),
      claimsAcked: ledger.claims.length,
      seconds: (Date.now() - t0) / 1000,
    });
  }, pick(180_000, 900_000));
});
