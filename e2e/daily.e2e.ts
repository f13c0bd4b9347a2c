/**
 * The console for daily use, against a real headless Gaffer, real agents and Chromium:
 * onboarding on an empty server (connect an agent first; the start command works as printed; a
 * tab without the token can paste it), then every view (a managed agent seeded for its view) at
 * 1024×700 and 1440×900 in both themes
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

describe('first open: connect an agent first', () => {
  it('an empty server leads with "connect an agent"; the start command works as printed and can be copied', async () => {
    const { page, errors } = await openConsole(browser, g, { width: 1024, height: 700 });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: g.url });
    await page.waitForSelector('[data-testid="connect-agent"]');
    // It is the first thing on the dashboard.
    expect(await page.evaluate(() => document.querySelector('[data-testid="view-dashboard"] > section, [data-testid="view-dashboard"] > div')?.getAttribute('data-testid'))).toBe('connect-agent');
    await snap(page, 'onboarding-1-dashboard');
    await page.click('[data-testid="connect-agent-start"]');
    await page.waitForSelector('[data-testid="dialog-create-token"]');
    expect(await page.evaluate(() => window.location.hash)).toBe('#/instances');
    await page.fill('[data-testid="dialog-create-token"] input[name="name"]', 'laptop worker');
    await page.fill('[data-testid="dialog-create-token"] input[name="role"]', 'onboard');
    await page.click('[data-testid="dialog-create-token"] button[type="submit"]');
    await page.waitForSelector('[data-testid="agent-commands"]');
    const secret = (await page.textContent('[data-testid="token-secret"]'))!.trim();
    const worker = (await page.textContent('[data-testid="command-worker"]'))!.trim();
    expect(worker).toBe(`GAFFER_URL=ws://127.0.0.1:${g.port}/agent GAFFER_TOKEN=${secret} GAFFER_ROLE=onboard npx tsx examples/worker-agent.ts`);
    expect(await page.textContent('[data-testid="command-command"]')).toBe(`GAFFER_TOKEN=${secret} npx gaffer agent --url ws://127.0.0.1:${g.port}/agent --role onboard -- your-cli`);
    expect(await page.textContent('[data-testid="command-python"]')).toContain('pip install ./sdk/python');
    await page.click('[aria-label="Copy the worker example command"]');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(worker);
    await snap(page, 'onboarding-2-token-commands');

    // Run it exactly as printed, from the checkout: the agent says hello and takes a task.
    const proc = spawn('bash', ['-c', worker], { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(proc);
    let out = '';
    proc.stdout!.on('data', (d) => (out += String(d)));
    proc.stderr!.on('data', (d) => (out += String(d)));
    try {
      const task = await createTask('Say hello from the laptop', 'onboard', { payload: { steps: 1, stepMs: 10 } });
      await until(async () => (await apiCall<{ task: { status: string } }>(g, 'GET', `/tasks/${task.id}`)).task.status === 'done', `the printed worker to finish a task (its output: ${out})`, 60_000);
    } finally {
      process.kill(-proc.pid!, 'SIGTERM');
      await new Promise<void>((r) => (proc.exitCode !== null ? r() : proc.once('exit', () => r())));
    }
    await page.click('[data-testid="dialog-token-secret"] .dialog-actions button');
    await page.context().close();
    expect(errors).toEqual([]);
  });

  it('a new tab without the token offers to paste it, and keeps it out of the address bar', async () => {
    const context = await browser.newContext({ viewport: { width: 1024, height: 700 } });
    const page = await context.newPage();
    await page.goto(g.url);
    await page.waitForSelector('[data-testid="sign-in"]');
    await snap(page, 'onboarding-3-sign-in');
    await page.fill('input[name="operator-token"]', `${g.url}/#token=${g.token}`);
    await page.click('[data-testid="sign-in-submit"]');
    await page.waitForSelector('[data-testid="view-dashboard"] .stats');
    expect(page.url()).not.toContain(g.token);
    expect(await page.evaluate(() => sessionStorage.getItem('gaffer.operatorToken'))).toBe(g.token);
    await until(async () => (await page.textContent('[data-testid="conn-status"]'))?.includes('live'), 'live events with the pasted token');
    await context.close();
  });
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

    // One managed agent, for the Managed agents view: Gaffer runs `gaffer agent` around a harmless
    // long-running command, for a role nobody gives work to (so the command itself never starts).
    await apiCall(g, 'POST', '/managed-agents', { name: 'night-watch', role: 'watch', command: ['sleep', '3600'], timeoutS: 600, reason: 'e2e: a managed agent to look at' });
    await until(
      async () => (await apiCall<{ managedAgent: { processes: Array<{ status: string; instanceId: string | null }> } }>(g, 'GET', '/managed-agents/night-watch')).managedAgent.processes.some((p) => p.status === 'running' && p.instanceId),
      'the managed agent to run and say hello',
      60_000,
    );
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
  { name: 'managed', hash: () => '#/managed', ready: '[data-testid="managed-table"] [data-row-key]' },
  { name: 'managed-agent', hash: () => '#/managed/night-watch', ready: '[data-testid="managed-detail"] [data-testid="managed-output"]' },
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
        // Words: no spec references, no bare rule ids (Settings lists the rules with their meaning).
        const text = (await page.textContent('main')) ?? '';
        if (/SPEC|§/.test(text)) problems.push(`${v.name}: says "SPEC §"`);
        if (v.name !== 'settings' && /\bP[1-5]\b/.test(text)) problems.push(`${v.name}: a bare rule id (${/\bP[1-5]\b/.exec(text)![0]})`);
      }
      await page.context().close();
      expect(problems).toEqual([]);
      expect(errors).toEqual([]);
    });
  }
});


describe('daily work at 1024×700', () => {
  let page: Page;
  let errors: string[];
  beforeAll(async () => {
    ({ page, errors } = await openConsole(browser, g, { width: 1024, height: 700 }));
  });
  afterAll(async () => {
    await page?.context().close();
  });

  it('jobs: a workday job reads "every workday"; the row menu reaches every action by keyboard', async () => {
    await go(page, '#/jobs', '[data-testid="jobs-table"] [data-row-key]');
    expect(await page.textContent('[data-testid="jobs-table"]')).toContain('every workday at 09:00');
    expect(await page.textContent('[data-testid="jobs-table"]')).not.toContain('every day');
    await page.focus('[data-testid="more-daily-report"]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[role="menu"]');
    const items = await page.$$eval('[role="menu"] [role="menuitem"]', (b) => b.map((x) => x.textContent));
    expect(items).toEqual(['Pause', 'Disable', 'Runs', 'Why didn’t it run?']);
    await snap(page, 'daily-1-jobs-row-menu');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Pause');
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="dialog-job-pause"]');
    // A confirmation never has two buttons that say "Cancel".
    const buttons = await page.$$eval('[data-testid="dialog-job-pause"] .dialog-actions button', (b) => b.map((x) => x.textContent));
    expect(buttons).toEqual(['Back', 'Pause']);
    await page.fill('[data-testid="dialog-job-pause"] textarea[name="reason"]', 'e2e: data late today');
    await page.click('[data-testid="dialog-job-pause"] button[type="submit"]');
    await until(async () => ((await page.textContent('[data-testid="job-state-daily-report"]')) ?? '').includes('Paused'), 'the job paused');
    await page.click('[data-testid="more-daily-report"]');
    await page.click('[role="menu"] [data-testid="resume-daily-report"]');
    await page.fill('[data-testid="dialog-job-resume"] textarea[name="reason"]', 'e2e: data arrived');
    await page.click('[data-testid="dialog-job-resume"] button[type="submit"]');
    await until(async () => ((await page.textContent('[data-testid="job-state-daily-report"]')) ?? '').includes('Active'), 'the job active again');
  });

  it('the board with the task pane open keeps five full columns; the pane overlays them', async () => {
    await go(page, `#/queues/pm?task=${heldTask}`, '[data-testid="task-detail"] .badge');
    const geo = await page.evaluate(() => {
      const cols = Array.from(document.querySelectorAll<HTMLElement>('.columns > *')).map((c) => c.getBoundingClientRect().width);
      const pane = document.querySelector('[data-testid="task-detail"]')!.getBoundingClientRect();
      const board = document.querySelector('.columns')!.getBoundingClientRect();
      return { cols, paneLeft: pane.left, boardRight: board.right, position: getComputedStyle(document.querySelector('[data-testid="task-detail"]')!).position };
    });
    expect(geo.cols).toHaveLength(5);
    expect(Math.min(...geo.cols)).toBeGreaterThanOrEqual(150);
    expect(geo.position).toBe('fixed');
    expect(geo.paneLeft).toBeLessThan(geo.boardRight);
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="task-detail"]', { state: 'detached' });
  });

  it('instances: a dropped agent counts down its reconnect grace and is not "Connected"', async () => {
    const token = await createAgentToken(g, 'flaky agent', 'flaky');
    const flaky = await spawnAgent(g, 'hold-agent.ts', { GAFFER_TOKEN: token, ROLE: 'flaky', NAME: 'flaky-1' });
    children.push(flaky.proc);
    const id = (await flaky.waitFor(/^ready /)).split(' ')[1]!;
    flaky.proc.kill('SIGKILL');
    await go(page, '#/instances', `[data-testid="grace-${id}"]`);
    expect(await page.textContent(`[data-testid="grace-${id}"]`)).toMatch(/back within \d+:\d\d/);
    await snap(page, 'daily-2-instances-grace');
    await page.click('[data-testid="instances-filter-online"]');
    await until(async () => !((await page.textContent('[data-testid="instances-table"]')) ?? '').includes('flaky-1'), 'the dropped agent out of Connected');
    await page.click('[data-testid="instances-filter-disconnected"]');
    await until(async () => ((await page.textContent('[data-testid="instances-table"]')) ?? '').includes('flaky-1'), 'the dropped agent under Reconnecting');
    await page.click('[data-testid="instances-filter-live"]');
  });

  it('expired-lock cards tell the watchdog from an operator', async () => {
    await go(page, '#/locks', '[data-testid="expired-cards"] .xcard');
    const causes = await page.$$eval('[data-testid^="expired-card-"]', (cards) => cards.map((c) => [c.querySelector('.task-link')?.textContent ?? '', c.getAttribute('data-cause'), c.querySelector('[data-testid="expiry-cause"]')?.textContent]));
    expect(causes).toEqual(
      expect.arrayContaining([
        [expect.stringContaining('Crunch the nightly numbers'), 'watchdog', 'Taken back by the watchdog'],
        [expect.stringContaining('Summarise the support inbox'), 'operator', 'Force-released by an operator'],
      ]),
    );
  });

  it('audit filters as people type them, in the URL: Back undoes one, nothing leaks into the next visit', async () => {
    await go(page, '#/audit', '[data-testid="audit-row"]');
    await page.fill('input[name="audit-actor"]', 'operator');
    await until(async () => (await page.evaluate(() => window.location.hash)) === '#/audit?actor=operator', 'the actor in the URL');
    await until(async () => {
      const actors = await page.$$eval('[data-testid="audit-row"]', (rows) => rows.map((r) => r.textContent ?? ''));
      return actors.length > 0 && actors.every((a) => /operator:/.test(a));
    }, 'only operator rows');
    expect(await page.textContent('[data-testid="audit-filter-notes"]')).toContain('every operator:');
    await page.fill('input[name="audit-type"]', 'lock');
    await until(async () => (await page.evaluate(() => window.location.hash)).includes('type=lock'), 'the type in the URL');
    await page.fill('input[name="audit-actor"]', '');
    await until(async () => {
      const types = await page.$$eval('[data-testid="audit-row"] .badge', (b) => b.map((x) => x.textContent ?? ''));
      return types.length > 0 && types.every((t) => t.startsWith('lock.'));
    }, 'only lock.* rows');
    await snap(page, 'daily-3-audit-type-prefix');
    await page.goBack();
    await until(async () => (await page.inputValue('input[name="audit-actor"]')) === 'operator' && (await page.inputValue('input[name="audit-type"]')) === 'lock', 'Back restores the previous filter');
    // An instance's name finds its id.
    await page.fill('input[name="audit-type"]', '');
    await page.fill('input[name="audit-actor"]', 'pm-planner');
    await until(async () => ((await page.textContent('[data-testid="audit-filter-notes"]')) ?? '').includes('is instance inst_'), 'the name read as an instance id');
    await until(async () => (await page.$$('[data-testid="audit-row"]')).length > 0, 'the pm agent’s rows');
    // Another view, then Audit again without a query: the filter is gone.
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    await go(page, '#/audit', '[data-testid="audit-row"]');
    expect(await page.inputValue('input[name="audit-actor"]')).toBe('');
    expect(await page.textContent('[data-testid="audit-status"]')).not.toContain('(filtered)');
    // Arriving wrote no history of its own: Back leaves Audit.
    await page.goBack();
    await page.waitForSelector('[data-testid="view-dashboard"]');
    expect(errors).toEqual([]);
  });
});
