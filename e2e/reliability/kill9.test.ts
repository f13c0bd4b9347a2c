/**
 * Scenario 1 — kill -9 of the headless server at random moments under load.
 *
 * Expected outcome, checked after EVERY kill by reading the database of the dead server:
 * - the database opens and passes quick_check, and every invariant holds: one live holder per task,
 *   fences grow by one, the audit hash chain is intact from genesis, every status edge is legal,
 *   state tables agree with the audit log;
 * - no committed write is lost: every create (by idempotency key), claim and report an agent or
 *   an HTTP client was told "ok" about is in the database;
 * - no task exists twice: a create repeated with its idempotency key after a restart returns the
 *   task of the first attempt.
 * After the last round the server is restarted once more, the SDK agents (which reconnect with
 * backoff and resume their instances) finish every task, and the final database passes every check.
 */
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LoadAgent, httpCreateKeyed } from './lib/agents';
import { apiOk, createAgentToken } from './lib/http';
import { assertNoProblems, checkDatabaseFile, newLedger } from './lib/invariants';
import { figures, pick, rngFor, sleep, until } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, newOperatorToken, startServer, tempDir, type Server, type ServerOptions, removeTempDirs } from './lib/server';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

describe('kill -9 of the headless server under load', () => {
  it('every round: the database opens cleanly, invariants hold, no acknowledged write is lost; finally every task is done once', async () => {
    const t0 = Date.now();
    const rng = rngFor('kill9');
    // Bounded: 12 rounds (CI time; each round is a kill, a check of the dead database and a restart,
    // ~3.5 s): fewer kills at random moments, the same checks after each; full: 60.
    const rounds = pick(12, 60);
    const agentsN = pick(4, 6);
    const dataDir = tempDir('kill9');
    const port = await freePort();
    const operatorToken = newOperatorToken();
    const opts: ServerOptions = {
      dataDir,
      port,
      operatorToken,
      lockWindowS: 30,
      sweepIntervalS: 1,
      reconnectGraceS: 8,
      idempotencyWindowS: 3600,
      heartbeatIntervalMs: 2000,
    };
    const ledger = newLedger();
    const problems: string[] = [];
    let server: Server = await startServer(opts);

    const agents: LoadAgent[] = [];
    for (let i = 0; i < agentsN; i++) {
      const { token } = await createAgentToken(port, operatorToken, `load-${i}`, 'dev');
      const a = await LoadAgent.start({ url: server.agentUrl, token, role: 'dev', name: `a${i}`, ledger, rng: rng.fork(i), problems, backlogEvery: 9 });
      a.startCreating(15);
      a.startWorking(2);
      agents.push(a);
    }
    // An HTTP client creating tasks with Idempotency-Key across the kills too.
    let httpStop = false;
    let httpSeq = 0;
    let httpRetries = 0;
    const httpLoop = (async () => {
      while (!httpStop) {
        const n = ++httpSeq;
        const r = await httpCreateKeyed(() => port, operatorToken, `http-k${n}`, `http task ${n}`, ledger, problems);
        httpRetries += r.retries;
        await sleep(rng.int(10, 40));
      }
    })();

    const downMs: number[] = [];
    let maxAudit = 0;
    let replays = 0;
    for (let round = 1; round <= rounds; round++) {
      await sleep(rng.int(pick(250, 200), pick(1000, 2500)));
      await server.kill9();
      const killedAt = Date.now();
      const check = checkDatabaseFile(path.join(dataDir, 'gaffer.db'), ledger);
      assertNoProblems(check.problems, `after kill ${round}`);
      maxAudit = check.auditRows;
      // Sometimes restart at once, sometimes let the agents' reconnects fail for a while.
      if (rng.chance(0.3)) await sleep(rng.int(100, 800));
      server = await startServer(opts);
      downMs.push(Date.now() - killedAt);
      // Idempotency across the restart: repeating acknowledged creates returns the same tasks.
      const keys = [...ledger.creates.keys()];
      for (let i = 0; i < 4 && keys.length > 0; i++) {
        const key = rng.pick(keys);
        const { title } = ledger.creates.get(key)!;
        const m = /^a(\d+)-k/.exec(key);
        const r = m ? await agents[Number(m[1])]!.createKeyed(key, title) : await httpCreateKeyed(() => port, operatorToken, key, title, ledger, problems);
        if (!r?.replayed) problems.push(`round ${round}: repeating create ${key} was not a replay (${JSON.stringify(r)})`);
        else replays++;
      }
      expect(problems).toEqual([]);
    }

    // Stop creating, let the agents finish everything.
    httpStop = true;
    await httpLoop;
    await Promise.all(agents.map((a) => a.stopCreating()));
    const final = await until(
      async () => {
        const s = await apiOk(port, operatorToken, 'GET', '/status');
        const t = s.json.counts.tasks as Record<string, number>;
        return t.backlog === 0 && t.in_progress === 0 ? t : undefined;
      },
      'every task done',
      pick(60_000, 180_000),
      200,
    );
    for (const a of agents) await a.close();
    await server.stop();

    const end = checkDatabaseFile(path.join(dataDir, 'gaffer.db'), ledger);
    assertNoProblems(end.problems, 'final database');
    expect(problems).toEqual([]);
    // Every acknowledged create ended done; nothing else is on the board.
    expect(final.done).toBe(ledger.creates.size);
    expect(Object.keys(final).filter((k) => k !== 'done' && final[k]! > 0)).toEqual([]);
    const stats = agents.map((a) => a.stats);
    const sum = (k: keyof (typeof stats)[0]) => stats.reduce((n, s) => n + s[k], 0);
    // The agents really lived through the kills: they reconnected and resumed their instances.
    expect(sum('resumed')).toBeGreaterThan(0);
    figures('kill9', {
      rounds,
      agents: agentsN,
      tasks: ledger.creates.size,
      claimsAcked: ledger.claims.length,
      reportsAcked: ledger.reports.length,
      replayedCreates: sum('replayed'),
      deliberateReplays: replays,
      createRetries: sum('retries') + httpRetries,
      resumed: sum('resumed'),
      freshInstances: sum('fresh'),
      locksLost: sum('lost'),
      auditRows: Math.max(maxAudit, end.auditRows),
      medianDowntimeMs: downMs.sort((a, b) => a - b)[Math.floor(downMs.length / 2)]!,
      seconds: (Date.now() - t0) / 1000,
    });
  }, pick(240_000, 1_200_000));
});
