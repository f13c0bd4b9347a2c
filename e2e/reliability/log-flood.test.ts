/**
 * Scenario 7 — one agent floods logs (issue 25, item 5), against the real headless server.
 *
 * Expected outcomes:
 * - total at write time: with "keep at most" set to 16 MiB and the token's rate out of the way, one
 *   agent sends 3× that as fast as Gaffer acknowledges (4 frames in flight); the logs directory, sampled every 20 ms,
 *   never holds more than 16 MiB (the oldest files go as lines are written, not at the hourly
 *   sweep), the newest lines are readable, and another agent's claim + report keeps being answered
 *   all along.
 * - rate per token: with a rate of 256 KiB/s and bursts of 1 MiB the same flood is refused
 *   `rate_limited` past the burst; what is taken stays within burst + rate × time, and the other
 *   agent (another token) is still answered.
 * - free-space floor (needs root: a tmpfs data directory): below max(minFreeDiskMb, gaffer.db's
 *   size) free, every log frame is refused `unavailable` with the reason, `GET /status` says so
 *   under `logs.refusing` with `ok: true`, one log line says so, and claims, reports and task
 *   creates still commit.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { api, apiOk, createAgentToken, request } from './lib/http';
import { mountTmpfs, mountUnavailable } from './lib/mounts';
import { figures, sleep, until } from './lib/mode';
import { killAllChildren } from './lib/procs';
import { freePort, removeTempDirs, startServer, tempDir, type Server } from './lib/server';
import { RawAgent } from './lib/wire';

afterAll(async () => {
  await killAllChildren();
  removeTempDirs();
});

const MIB = 1024 * 1024;

/** Bytes in the logs directory now (segments, WALs, shared-memory files). */
function logsOnDisk(dataDir: string): number {
  const dir = path.join(dataDir, 'logs');
  let n = 0;
  for (const f of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    try {
      n += fs.statSync(path.join(dir, f)).size;
    } catch {
      /* deleted between the listing and the stat: it takes nothing */
    }
  }
  return n;
}

async function setLogSettings(s: Server, settings: Record<string, number>): Promise<void> {
  const r = await request(s.port, { method: 'POST', path: '/console/rpc/logs.setSettings', token: s.operatorToken, headers: { host: `127.0.0.1:${s.port}` }, body: { settings, reason: 'log flood scenario' } });
  if (r.status !== 200) throw new Error(`logs.setSettings → ${r.status}: ${r.text.slice(0, 300)}`);
}

/** An agent of its own token holding a claimed task. */
async function holder(s: Server, name: string): Promise<{ agent: RawAgent; taskId: number; fence: number }> {
  const { token } = await createAgentToken(s.port, s.operatorToken, name);
  const agent = await RawAgent.hello(s.agentUrl, token, 'flood', name);
  await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: `${name}'s task`, role: 'flood' });
  const c = await agent.request('claim');
  if (!c.ok || !c.result.task) throw new Error(`claim failed: ${JSON.stringify(c)}`);
  return { agent, taskId: c.result.task.id, fence: c.result.lock.fence };
}

/**
 * Another agent (its own token) doing claim + report on role `work` until stopped: every request
 * must be answered ok; returns the count and the slowest round trip.
 */
function claimLoop(s: Server, agent: RawAgent) {
  let stop = false;
  const result = { rounds: 0, slowestMs: 0, failures: [] as string[] };
  const done = (async () => {
    for (let i = 0; !stop; i++) {
      await apiOk(s.port, s.operatorToken, 'POST', '/tasks', { title: `work ${i}`, role: 'work' });
      const t0 = performance.now();
      const c = await agent.request('claim');
      if (!c.ok || !c.result.task) {
        result.failures.push(`claim: ${JSON.stringify(c).slice(0, 200)}`);
        continue;
      }
      const r = await agent.request('report', { taskId: c.result.task.id, fence: c.result.lock.fence, status: 'done' });
      if (!r.ok) result.failures.push(`report: ${JSON.stringify(r).slice(0, 200)}`);
      result.slowestMs = Math.max(result.slowestMs, performance.now() - t0);
      result.rounds++;
      await sleep(20);
    }
  })();
  return {
    result,
    async stop() {
      stop = true;
      await done;
      return result;
    },
  };
}

/**
 * Sends frames of 100 numbered lines of 2 000 characters (~200 KiB), `inFlight` at a time, until
 * `untilBytes` are acknowledged or `ms` pass. With one in flight, a refused frame's lines are sent
 * again after a pause (as the SDKs do).
 */
async function flood(h: { agent: RawAgent; taskId: number }, o: { untilBytes: number; ms: number; seqFrom?: number; inFlight?: number }) {
  const text = 'flood '.padEnd(2000, 'x');
  const k = o.inFlight ?? 1;
  let seq = o.seqFrom ?? 0;
  const out = { ackedBytes: 0, refused: new Map<string, number>(), lastSeq: seq, firstRefusal: '' };
  const end = performance.now() + o.ms;
  while (out.ackedBytes < o.untilBytes && performance.now() < end) {
    const frames = Array.from({ length: k }, () => {
      const lines = Array.from({ length: 100 }, () => ({ text, seq: ++seq }));
      return { last: seq, text: JSON.stringify({ id: `f${seq}`, type: 'log', taskId: h.taskId, lines }) };
    });
    const replies = await Promise.all(frames.map((f) => h.agent.sendText(f.text, `f${f.last}`)));
    replies.forEach((r, i) => {
      if (r.ok) {
        out.ackedBytes += frames[i]!.text.length;
        out.lastSeq = Math.max(out.lastSeq, frames[i]!.last);
        return;
      }
      const code = r.error?.code ?? '?';
      out.refused.set(code, (out.refused.get(code) ?? 0) + 1);
      out.firstRefusal ||= r.error?.message ?? '';
    });
    if (replies.some((r) => !r.ok)) {
      if (k === 1) seq -= 100; // resend the same lines
      await sleep(50);
    }
  }
  return out;
}

describe('scenario 7: one agent floods logs', () => {
  it('the logs directory stays within "keep at most" as lines are written; the token rate holds; another agent is answered', async () => {
    const dataDir = tempDir('logflood');
    const s = await startServer({ dataDir, port: await freePort() });
    try {
      // Phase 1: the total. 16 MiB at most, the rate out of the way.
      const CAP = 16 * MIB;
      await setLogSettings(s, { maxTotalMb: 16, logBytesPerSecondPerToken: 1024 * MIB, logBurstBytesPerToken: 1024 * MIB });
      const flooder = await holder(s, 'flooder');
      const worker = claimLoop(s, await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker')).token, 'work', 'worker'));
      let most = 0;
      const sampler = setInterval(() => (most = Math.max(most, logsOnDisk(dataDir))), 20);
      const t0 = performance.now();
      const big = await flood(flooder, { untilBytes: 3 * CAP, ms: 60_000, inFlight: 4 });
      const floodS = (performance.now() - t0) / 1000;
      clearInterval(sampler);
      most = Math.max(most, logsOnDisk(dataDir));
      const work1 = await worker.stop();
      expect(big.refused.size, big.firstRefusal).toBe(0);
      expect(big.ackedBytes).toBeGreaterThanOrEqual(3 * CAP);
      expect(most).toBeLessThanOrEqual(CAP);
      expect(work1.failures).toEqual([]);
      expect(work1.rounds).toBeGreaterThan(0);
      // The newest lines are there; the oldest went with their files.
      const page = await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${flooder.taskId}/logs?limit=1`);
      const attempts = await apiOk(s.port, s.operatorToken, 'GET', `/tasks/${flooder.taskId}/logs/attempts`);
      expect(page.json.items[0].seq).toBeGreaterThan(1);
      expect(JSON.stringify(attempts.json)).toContain(`"lastSeq":${big.lastSeq}`);

      // Phase 2: a rate per token (256 KiB/s, bursts of 1 MiB: the default is 1 MiB/s and 8 MiB,
      // more than this machine's flood reaches in 3 s) and the cap out of the way.
      const RATE = 256 * 1024;
      await setLogSettings(s, { maxTotalMb: 4096, logBytesPerSecondPerToken: RATE, logBurstBytesPerToken: MIB });
      const worker2 = claimLoop(s, await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker2')).token, 'work', 'worker2'));
      const t1 = performance.now();
      const limited = await flood(flooder, { untilBytes: Infinity, ms: 3000, seqFrom: big.lastSeq });
      const limitedS = (performance.now() - t1) / 1000;
      const work2 = await worker2.stop();
      expect(limited.refused.get('rate_limited') ?? 0).toBeGreaterThan(0);
      expect(limited.firstRefusal).toContain('bytes/s');
      expect(limited.ackedBytes).toBeLessThanOrEqual(MIB + RATE * limitedS + 256 * 1024);
      expect(work2.failures).toEqual([]);
      expect(work2.rounds).toBeGreaterThan(0);

      figures('log flood', {
        cap: '16 MiB',
        flooded: `${(big.ackedBytes / MIB).toFixed(0)} MiB acknowledged in ${floodS.toFixed(1)} s`,
        'most on disk': `${(most / MIB).toFixed(1)} MiB`,
        'claims meanwhile': `${work1.rounds} (slowest ${work1.slowestMs.toFixed(0)} ms)`,
        'rate 256 KiB/s, burst 1 MiB': `${(limited.ackedBytes / MIB).toFixed(1)} MiB taken in ${limitedS.toFixed(1)} s, ${limited.refused.get('rate_limited')} frames refused rate_limited; ${work2.rounds} claims (slowest ${work2.slowestMs.toFixed(0)} ms)`,
      });
    } finally {
      await s.stop();
    }
  });

  const noMount = mountUnavailable();
  it.skipIf(noMount !== undefined)(`below the free-space floor every log frame is refused with the reason while the scheduler keeps writing${noMount ? ` (skipped: ${noMount})` : ''}`, async () => {
    const mount = mountTmpfs(64);
    try {
      const s = await startServer({ dataDir: mount.dir, port: await freePort() });
      try {
        // Keep 48 MiB free on a 64 MiB disk: the logs may take ~16 MiB of it, then stop.
        await setLogSettings(s, { minFreeDiskMb: 48, logBytesPerSecondPerToken: 1024 * MIB, logBurstBytesPerToken: 1024 * MIB });
        const flooder = await holder(s, 'flooder');
        const worker = claimLoop(s, await RawAgent.hello(s.agentUrl, (await createAgentToken(s.port, s.operatorToken, 'worker')).token, 'work', 'worker'));
        const out = await flood(flooder, { untilBytes: 64 * MIB, ms: 15_000 });
        expect(out.refused.get('unavailable') ?? 0).toBeGreaterThan(0);
        expect(out.firstRefusal).toMatch(/only \d+ MiB free on the disk of the data directory, below the 48 MiB kept for the main database/);
        const status = await api(s.port, s.operatorToken, 'GET', '/status');
        expect(status.json).toMatchObject({ ok: true, storage: null, logs: { refusing: { floorBytes: 48 * MIB } } });
        // The scheduler itself still writes: tasks are created, claimed and reported.
        await sleep(500);
        const work = await worker.stop();
        expect(work.failures).toEqual([]);
        expect(work.rounds).toBeGreaterThan(0);
        const free = fs.statfsSync(mount.dir);
        expect(free.bavail * free.bsize).toBeGreaterThan(40 * MIB);
        await until(() => s.log().includes('logs: Log lines are refused'), 'the log line', 5000);
        figures('log floor', {
          disk: '64 MiB tmpfs, floor 48 MiB',
          'logs taken': `${(out.ackedBytes / MIB).toFixed(1)} MiB, then ${out.refused.get('unavailable')} frames refused unavailable`,
          'claims meanwhile': `${work.rounds} (slowest ${work.slowestMs.toFixed(0)} ms)`,
          'free at the end': `${((free.bavail * free.bsize) / MIB).toFixed(0)} MiB`,
        });
      } finally {
        await s.stop();
      }
    } finally {
      mount.cleanup();
    }
  });
});
