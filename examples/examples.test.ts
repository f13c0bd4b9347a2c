/**
 * Unit tests of the example agents' handlers with hand-made contexts. Running them against the
 * real hub is in src-main/server/sdk-hub.test.ts (examples may not import core or server).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JobContext, Task, WorkContext } from 'gaffer-agent';
import { dataReady, reportJob, slotFileName } from './report-agent';
import { workTask } from './worker-agent';

const tmp = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

function jobContext(slot: string, completed: string[] = []): { ctx: JobContext; ran: string[] } {
  const ran: string[] = [];
  const done = new Set(completed);
  const ctx = {
    runId: 'run_1',
    job: 'daily-report',
    slot,
    attempt: 1,
    version: 1,
    payload: {},
    idempotencyKey: `job:${slot}`,
    completedSteps: completed,
    step: async <T>(name: string, fn: () => Promise<T> | T) => {
      if (done.has(name)) return undefined;
      ran.push(name);
      return fn();
    },
  } as unknown as JobContext;
  return { ctx, ran };
}

describe('report-agent', () => {
  it('names the file after the slot', () => {
    expect(slotFileName('2026-11-30')).toBe('daily-2026-11-30.md');
    expect(slotFileName('2026-W48')).toBe('daily-2026-W48.md');
    expect(slotFileName('2026-11-30T09:00')).toBe('daily-2026-11-30T09-00.md');
    expect(() => slotFileName('../../etc/passwd')).toThrow(/unexpected slot/);
  });

  it('writes one file per slot, and skips steps a previous attempt completed', async () => {
    const dir = path.join(tmp('gaffer-reports-'), 'reports');
    const notes: string[] = [];
    const job = reportJob({ dir, notify: async (_t, key) => (notes.push(key), `msg-${notes.length}`) });
    const first = jobContext('2026-11-30');
    expect(await job(first.ctx)).toEqual({ file: path.join(dir, 'daily-2026-11-30.md') });
    expect(first.ran).toEqual(['write file', 'notify']);
    const retry = jobContext('2026-11-30', ['write file']);
    await job(retry.ctx);
    expect(retry.ran).toEqual(['notify']);
    await job(jobContext('2026-11-30').ctx);
    await job(jobContext('2026-11-30T09:00').ctx);
    expect(fs.readdirSync(dir).sort()).toEqual(['daily-2026-11-30.md', 'daily-2026-11-30T09-00.md']);
    expect(notes).toEqual(['job:2026-11-30', 'job:2026-11-30', 'job:2026-11-30', 'job:2026-11-30T09:00']);
  });

  it('a failed write is retryable', async () => {
    const blocker = path.join(tmp('gaffer-ro-'), 'file-not-dir');
    fs.writeFileSync(blocker, 'in the way');
    const job = reportJob({ dir: blocker, notify: async () => 'x' });
    await expect(job(jobContext('2026-11-30').ctx)).rejects.toMatchObject({ errorClass: 'retryable' });
  });

  it('answers the data-ready precheck with evidence', async () => {
    const dataDir = tmp('gaffer-data-');
    const check = dataReady(dataDir);
    const ctx = { requestId: 'r', check: 'data-ready', slot: '2026-11-30' };
    expect(await check(ctx)).toMatchObject({ ready: false, evidence: { path: path.join(dataDir, '2026-11-30.csv') } });
    fs.writeFileSync(path.join(dataDir, '2026-11-30.csv'), 'a,b\n1,2\n');
    expect(await check(ctx)).toMatchObject({ ready: true, evidence: { bytes: 8 } });
  });
});

describe('worker-agent', () => {
  const ctx = (payload: unknown, signal = new AbortController().signal): WorkContext =>
    ({ task: { id: 1, title: 't', payload } as Task, attempt: 1, previouslyExpired: false, signal, lock: { fence: 1, expiresAt: '' } }) as unknown as WorkContext;

  it('finishes its steps, blocks on a missing need, stops when aborted', async () => {
    expect(await workTask(ctx({ steps: 2, stepMs: 1 }))).toEqual({ output: { steps: 2, attempt: 1 }, note: 'finished 2 steps' });
    await expect(workTask(ctx({ needs: 'creds' }))).rejects.toMatchObject({ name: 'BlockedError', reportStatus: 'blocked' });
    const ac = new AbortController();
    const running = workTask(ctx({ steps: 5, stepMs: 10_000 }, ac.signal));
    ac.abort(new Error('lock lost'));
    await expect(running).rejects.toThrow('lock lost');
  });
});
