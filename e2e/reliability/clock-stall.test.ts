/**
 * Scenario 3b — the server itself stalls (SIGSTOP of the real headless server, then SIGCONT) while
 * its agents keep talking: the stall is longer than the heartbeat timeout and than a run's
 * deadline, but nobody else stopped. Timings are scaled down so the stall takes seconds:
 * heartbeats every 250 ms (interval 500 ms), heartbeat timeout 3 s, lock window 3 s renewed every
 * second, a run with a 3 s deadline whose `success` is sent in the middle of the stall.
 *
 * Expected outcomes:
 * - on waking the server reads what the sockets delivered before any timer decides liveness or a
 *   deadline: the heartbeats, renewals and the `success` sent during the stall all count;
 * - the stall is the server's own absence: no instance goes offline, no lock expires, the run is
 *   not declared lost and its slot does not run again;
 * - the stall is recorded once (one `clock.jump` row for it, carrying what was shifted).
 *
 * Scenario 3c — the stall begins right after work was handed out (issue 25, item 3): a run is
 * dispatched a few milliseconds before SIGSTOP (the server is stopped as the trigger reaches the
 * agent: after the gap detector's last reading), and a task claimed just before. The
 * acknowledgement, the success and the report are sent during the stall. Expected: both deadlines move by the gap like older ones (everything recorded before the
 * wake is old), both are accepted, the run is not dispatched a second time, no lock expires.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { apiOk, createAgentToken } from './lib/http';
import { assertNoProblems, checkDatabaseFile } from './lib/invariants';
import { figures, sleep, until } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, newOperatorToken, startServer, tempDir, removeTempDirs } from './lib/server';
import { RawAgent, type WireReply } from './lib/wire';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

const STALL_MS = 4500;

interface AuditRow {
  id: number;
  at: string;
  type: string;
  subject: string;
  detail: Record<string, any>;
}

describe('the server stalls (SIGSTOP) longer than the heartbeat timeout while its agents keep talking', () => {
  it('nothing expires: heartbeats, renewals and a success sent during the stall count; the stall is recorded once', async () => {
    const s = await startServer({
      dataDir: tempDir('stall'),
      port: await freePort(),
      operatorToken: newOperatorToken(),
      heartbeatIntervalMs: 500,
      heartbeatTimeoutS: 3,
      lockWindowS: 3,
      sweepIntervalS: 1,
      reconnectGraceS: 2,
    });
    const audit = async (type: string): Promise<AuditRow[]> =>
      (await apiOk(s.port, s.operatorToken, 'GET', `/audit?type=${type}&limit=1000`)).json.items as AuditRow[];

    const dev = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'dev-1', 'dev')).token, 'dev', 'dev-1');
    const rep = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'rep-1', 'reporter')).token, 'reporter', 'rep-1');
    const taskId = (await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: 'held through the stall', role: 'dev' })).json.task.id as number;
    const claim = await dev.request('claim');
    expect(claim.result.task.id).toBe(taskId);
    const fence = claim.result.lock.fence as number;

    // Both agents heartbeat every 250 ms and the holder renews every second, stall or not.
    const replies: Array<{ what: string; reply: Promise<WireReply> }> = [];
    const heartbeats = setInterval(() => {
      for (const a of [dev, rep]) if (a.open) replies.push({ what: `heartbeat ${a.instanceId}`, reply: a.request('heartbeat') });
    }, 250);
    const renewals = setInterval(() => {
      if (dev.open) replies.push({ what: 'renew', reply: dev.request('renew', { taskId, fence }) });
    }, 1000);

    // A run with a 3 s deadline, acknowledged before the stall.
    const triggers: any[] = [];
    rep.onPush = (m) => {
      if (m.type === 'job_trigger') triggers.push(m);
    };
    const job = (
      await apiOk(s.port, s.operatorToken, 'POST', '/jobs', { name: 'stall-run', role: 'reporter', schedule: { cron: '0 3 1 1 *', timezone: 'UTC' }, runTimeoutS: 3 })
    ).json.job;
    await apiOk(s.port, s.operatorToken, 'POST', `/jobs/${job.id}/trigger`, { reason: 'stall test' });
    await until(() => triggers.length === 1, 'the trigger', 10_000, 10);
    const runId = triggers[0].runId as string;
    expect((await rep.request('run_started', { runId })).ok).toBe(true);

    await sleep(300);
    s.proc.signal('SIGSTOP');
    const stoppedAt = Date.now();
    await sleep(STALL_MS / 2);
    // Sent while the server is stopped: it waits in the socket.
    const success = rep.request('run_result', { runId, outcome: 'success' });
    await sleep(STALL_MS / 2);
    s.proc.signal('SIGCONT');
    const stalledMs = Date.now() - stoppedAt;

    const result = await success;
    await sleep(1500); // a few sweeps and heartbeat timeouts' worth of time after the wake
    clearInterval(heartbeats);
    clearInterval(renewals);
    const settled = await Promise.all(replies.map(async (r) => ({ what: r.what, reply: await r.reply })));
    const refused = settled.filter((r) => !r.reply.ok).map((r) => `${r.what}: ${r.reply.error?.code} ${r.reply.error?.message}`);

    const offline = await audit('instance.offline');
    const expired = await audit('lock.expire');
    const run = (await apiOk(s.port, s.operatorToken, 'GET', `/runs/${runId}`)).json.run;
    const jumps = await audit('clock.jump');
    const stallRows = jumps.filter((j) => Math.abs(j.detail.gapMs) >= 1000);
    const jobGaps = await audit('jobs.gap');

    figures('clock-stall', {
      stalledMs,
      heartbeatTimeoutS: 3,
      runDeadlineS: 3,
      offline: offline.length,
      expiredLocks: expired.length,
      refusedRequests: refused.length,
      successReply: result.ok ? 'ok' : `${result.error?.code}`,
      runStatus: `${run.status}/${run.attempt ?? ''}`,
      triggers: triggers.length,
      stallRows: stallRows.length,
      jobsGapRows: jobGaps.length,
    });
    expect(result, 'the success sent during the stall').toMatchObject({ ok: true });
    expect(refused).toEqual([]);
    expect(offline).toEqual([]);
    expect(expired).toEqual([]);
    expect(run.status).toBe('success');
    expect(triggers).toHaveLength(1);
    // One stall, one record of it (short scheduling hiccups of a busy machine may add small ones).
    expect(stallRows, JSON.stringify(jumps)).toHaveLength(1);
    expect(stallRows[0]!.detail.gapMs).toBeGreaterThan(STALL_MS - 1500);
    expect(stallRows[0]!.detail.gapMs).toBeLessThanOrEqual(stalledMs + 500);
    expect(jobGaps.length).toBeLessThanOrEqual(stallRows.length);
    const instances = (await apiOk(s.port, s.operatorToken, 'GET', '/instances')).json.items as Array<{ status: string }>;
    expect(instances.map((i) => i.status)).toEqual(['online', 'online']);

    await dev.close();
    await rep.close();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the server stall');
  }, 90_000);
});

describe('the server stalls (SIGSTOP) right after it dispatched a run and handed out a task', () => {
  it('the success and the report sent during the stall are accepted; the run is dispatched once; no lock expires', async () => {
    // A gap is over 2 s; the clocks are read every 500 ms. The run's deadline and the lock window
    // (3 s) both pass during the 4.5 s stall.
    const s = await startServer({
      dataDir: tempDir('stall-fresh'),
      port: await freePort(),
      operatorToken: newOperatorToken(),
      heartbeatIntervalMs: 2000,
      heartbeatTimeoutS: 6,
      lockWindowS: 3,
      sweepIntervalS: 1,
      reconnectGraceS: 2,
    });
    const audit = async (type: string): Promise<AuditRow[]> =>
      (await apiOk(s.port, s.operatorToken, 'GET', `/audit?type=${type}&limit=1000`)).json.items as AuditRow[];
    const dev = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'dev-1', 'dev')).token, 'dev', 'dev-1');
    const rep = await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'rep-1', 'reporter')).token, 'reporter', 'rep-1');
    const heartbeats = setInterval(() => {
      for (const a of [dev, rep]) if (a.open) void a.request('heartbeat');
    }, 500);
    const taskId = (await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: 'claimed just before the stall', role: 'dev' })).json.task.id as number;
    const job = (
      await apiOk(s.port, s.operatorToken, 'POST', '/jobs', { name: 'fresh-run', role: 'reporter', schedule: { cron: '0 3 1 1 *', timezone: 'UTC' }, runTimeoutS: 3 })
    ).json.job;

    // Hand out the task, then the run; stop the server the moment the trigger arrives (a few
    // milliseconds after the dispatch was recorded: after the last reading of the clocks).
    const triggers: any[] = [];
    let stoppedAt = 0;
    rep.onPush = (m) => {
      if (m.type !== 'job_trigger') return;
      triggers.push(m);
      if (stoppedAt === 0) {
        s.proc.signal('SIGSTOP');
        stoppedAt = Date.now();
      }
    };
    const claim = await dev.request('claim');
    expect(claim.result.task.id).toBe(taskId);
    const claimedAt = Date.now();
    // Its reply may be written after the stall: not awaited before it.
    const triggered = apiOk(s.port, s.operatorToken, 'POST', `/jobs/${job.id}/trigger`, { reason: 'stall right after the dispatch' });
    await until(() => stoppedAt > 0, 'the trigger', 10_000, 1);
    const runId = triggers[0].runId as string;

    await sleep(STALL_MS / 2);
    // Sent while the server is stopped: they wait in the sockets.
    const started = rep.request('run_started', { runId });
    const success = rep.request('run_result', { runId, outcome: 'success' });
    const report = dev.request('report', { taskId, fence: claim.result.lock.fence, status: 'done' });
    await sleep(STALL_MS / 2);
    s.proc.signal('SIGCONT');
    const stalledMs = Date.now() - stoppedAt;

    const [ack, result, reported] = [await started, await success, await report];
    await triggered;
    await sleep(2000); // sweeps, deadlines and a retry's worth of time after the wake
    clearInterval(heartbeats);

    const run = (await apiOk(s.port, s.operatorToken, 'GET', `/runs/${runId}`)).json.run;
    const task = (await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${taskId}`)).json.task;
    const expired = await audit('lock.expire');
    const refusedRuns = await audit('run.reject');
    const stallRows = (await audit('clock.jump')).filter((j) => Math.abs(j.detail.gapMs) >= 1000);
    figures('clock-stall-fresh', {
      claimToStopMs: stoppedAt - claimedAt,
      stalledMs,
      runDeadlineS: 3,
      lockWindowS: 3,
      startedReply: ack.ok ? 'ok' : `${ack.error?.code}`,
      successReply: result.ok ? 'ok' : `${result.error?.code}`,
      reportReply: reported.ok ? 'ok' : `${reported.error?.code}`,
      runStatus: `${run.status}/${run.attempt}`,
      triggers: triggers.length,
      expiredLocks: expired.length,
      stallRows: stallRows.length,
      shifted: JSON.stringify(stallRows[0]?.detail.shifted ?? {}),
    });
    expect(ack, 'the acknowledgement sent during the stall').toMatchObject({ ok: true });
    expect(result, 'the success sent during the stall').toMatchObject({ ok: true });
    expect(reported, 'the report sent during the stall').toMatchObject({ ok: true });
    expect(run).toMatchObject({ status: 'success', attempt: 1 });
    expect(triggers, 'dispatched once').toHaveLength(1);
    expect(task.status).toBe('done');
    expect(expired).toEqual([]);
    expect(refusedRuns).toEqual([]);
    expect(stallRows).toHaveLength(1);
    expect(stallRows[0]!.detail.shifted).toMatchObject({ 'runner.runs': 1, 'watchdog.locks': 1 });

    await dev.close();
    await rep.close();
    await s.stop();
    assertNoProblems(checkDatabaseFile(s.dbPath).problems, 'after the stall right after a dispatch');
  }, 90_000);
});
