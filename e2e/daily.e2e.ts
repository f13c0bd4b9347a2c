/**
 * The console for daily use, against a real headless Gaffer, real agents and Chromium:
 * onboarding on an empty server (connect an agent first; the start command works as printed; a
 * tab without the token can paste it), then every view (a managed agent seeded for its view) at
 * 1024×700 and 1440×900 in both themes
 * (screenshots under e2e/screenshots/views/, axe, and no action cut off sideways), and the
 * journeys of the daily work: overflow menus and an overlaying pane at 1024 px, audit filters
 * as people type them (in the URL), instances' reconnect grace and expired-lock causes; a bulk
 * action over every task a search matches (chunked, with a progress bar, audited per task), retry
 * with changes, trigger now naming its slot first, "why didn't it run?" with the fix at hand, the
 * Signals view, and the runs of every job, a frequent job's days → hours → slots and a backfilled slot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FatalError, type Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, ROOT, snap, spawnAgent, startAgent, startGaffer, until, type Gaffer } from './harness';
import { axeFindings, clippedActions } from './layout-check';

let g: Gaffer;
let browser: Browser;
const agents: Agent[] = [];
const children: ChildProcess[] = [];
let jobId = '';
let heldTask = 0;
/** Seeded for the daily-work journeys. */
const daily = { frequentJob: '', readyJob: '', backfillJob: '', backfilledSlot: '', failedTask: 0, imports: 0, checkedJob: '', checkedSlot: '', unverifiedTask: 0 };

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
    expect(await page.textContent('[data-testid="command-command"]')).toBe(`GAFFER_TOKEN=${secret} node scripts/gaffer.mjs agent --url ws://127.0.0.1:${g.port}/agent --role onboard -- your-cli`);
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
    let fragileFailed = false;
    reporter.onJob(async (ctx) => {
      // The first run of fragile-backfill fails for good (held, queued for backfill); its backfill succeeds.
      if (ctx.job === 'fragile-backfill' && !fragileFailed) {
        fragileFailed = true;
        throw new FatalError('the export was empty');
      }
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

  it('seeds the daily-work journeys: a frequent job, a job waiting on a signal, a backfilled slot, a failed task, 450 tasks to act on', async () => {
    // Every minute (disabled: its slots are counted, nothing runs): thousands of slots a day.
    daily.frequentJob = (await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'every-minute', role: 'etl', schedule: { cron: '* * * * *', timezone: 'UTC' }, enabled: false, reason: 'e2e' })).job.id;
    daily.readyJob = (await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'ready-report', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, preconditions: [{ kind: 'signal', name: 'data-ready' }], reason: 'e2e' })).job.id;
    await apiCall(g, 'POST', '/signals', { name: 'data-ready', key: '2026-11-30', reason: 'e2e: the upstream load finished' });
    // A slot that failed for good, then ran from the backfill queue.
    daily.backfillJob = (await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'fragile-backfill', role: 'reporter', schedule: { cron: '0 3 * * *', timezone: 'UTC' }, reason: 'e2e' })).job.id;
    await apiCall(g, 'POST', `/jobs/${daily.backfillJob}/trigger`, { reason: 'e2e: export now' });
    const held = await until(async () => (await apiCall<{ items: Array<{ id: number; status: string }> }>(g, 'GET', `/backfills?job=${daily.backfillJob}`)).items.find((b) => b.status === 'held'), 'the failed slot held in the backfill queue');
    await apiCall(g, 'POST', `/backfills/${held!.id}/run`, { reason: 'e2e: the export has rows now' });
    const backfilled = await until(async () => (await apiCall<{ items: Array<{ slot: string; disposition: string }> }>(g, 'GET', `/runs?job=${daily.backfillJob}`)).items.find((r) => r.disposition === 'backfilled'), 'the slot backfilled');
    daily.backfilledSlot = backfilled!.slot;
    // A task that failed: retried with a changed payload later.
    const build = await createTask('Build the release branch', 'builder', { payload: { branch: 'main' } });
    daily.failedTask = build.id;
    const builder = await startAgent(g, await createAgentToken(g, 'builder', 'builder'), 'builder', 'builder-1');
    await builder.work(() => {
      throw new Error('branch main has no release notes');
    }, { maxTasks: 1, idleDelayMs: 100 });
    await builder.close({ timeoutMs: 500 });
    expect((await apiCall<{ task: { status: string } }>(g, 'GET', `/tasks/${build.id}`)).task.status).toBe('failed');
    // Done means verified: a job whose run Gaffer checks (and passes), and a task whose agent said
    // done without the summary its check asks for (held for the operator).
    const rowsSchema = { type: 'object', required: ['rows'] };
    daily.checkedJob = (await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'checked-export', role: 'reporter', schedule: { cron: '0 4 * * *', timezone: 'UTC' }, verify: { checks: [{ kind: 'output', name: 'has rows', schema: rowsSchema }] }, reason: 'e2e' })).job.id;
    await apiCall(g, 'POST', `/jobs/${daily.checkedJob}/trigger`, { reason: 'e2e: a checked run' });
    const checked = await until(async () => (await apiCall<{ items: Array<{ slot: string; status: string }> }>(g, 'GET', `/runs?job=${daily.checkedJob}`)).items.find((r) => r.status === 'success'), 'the checked run to pass its check');
    daily.checkedSlot = checked!.slot;
    const unverified = await createTask('Write the changelog', 'writer', { verify: { checks: [{ kind: 'output', name: 'has a summary', schema: { type: 'object', required: ['summary'] } }], onFail: 'needs_human' } });
    daily.unverifiedTask = unverified.id;
    const writer = await startAgent(g, await createAgentToken(g, 'writer', 'writer'), 'writer', 'writer-1');
    await writer.work(async () => ({ output: { lines: 12 } }), { maxTasks: 1, idleDelayMs: 100 });
    await writer.close({ timeoutMs: 500 });
    await until(async () => (await apiCall<{ task: { status: string } }>(g, 'GET', `/tasks/${unverified.id}`)).task.status === 'blocked', 'the unverified task held for the operator');
    // Enough tasks for a bulk action of several chunks.
    daily.imports = 450;
    for (let i = 0; i < daily.imports; i++) await createTask(`Nightly import ${i} of the billing ledger`, 'importer', { payload: { table: `ledger_${i}` } });
  }, 120_000);
});

/** A view, and for a dialog the clicks that open it on that view (closed again with Escape, nothing sent). */
const VIEWS: Array<{ name: string; hash: () => string; ready: string; dialog?: { clicks: string[]; ready: string }; scrollTo?: string }> = [
  { name: 'dashboard', hash: () => '#/dashboard', ready: '[data-testid="chart-throughput"] .recharts-bar-rectangle' },
  { name: 'queues', hash: () => '#/queues/dev', ready: '[data-testid="column-done"] [data-testid^="task-"]' },
  { name: 'queues-task', hash: () => `#/queues/pm?task=${heldTask}`, ready: '[data-testid="task-detail"] .badge' },
  { name: 'retry-with-changes', hash: () => `#/queues/builder?task=${daily.failedTask}`, ready: '[data-testid="action-retryWithChanges"]', dialog: { clicks: ['[data-testid="action-retryWithChanges"]'], ready: '[data-testid="dialog-retryWithChanges"] textarea[name="payload"]' } },
  { name: 'task-not-verified', hash: () => `#/queues/writer?task=${daily.unverifiedTask}`, ready: '[data-testid="task-detail"] [data-testid="verification-check"]' },
  { name: 'new-task-done-when', hash: () => '#/queues/dev', ready: '[data-testid="create-task"]', dialog: { clicks: ['[data-testid="create-task"]', '[data-testid="done-when-add"]'], ready: '[data-testid="done-when-check"]' }, scrollTo: '[data-testid="done-when"]' },
  { name: 'task-transcript', hash: () => `#/queues/builder?task=${daily.failedTask}`, ready: '[data-testid="view-transcript"]', dialog: { clicks: ['[data-testid="view-transcript"]'], ready: '[data-testid="transcript-pane"]' } },
  { name: 'locks', hash: () => '#/locks', ready: '[data-testid="expired-cards"] .xcard' },
  { name: 'instances', hash: () => '#/instances', ready: '[data-testid="instances-table"] [data-row-key]' },
  { name: 'jobs', hash: () => '#/jobs', ready: '[data-testid="jobs-table"] [data-row-key]' },
  { name: 'trigger-now', hash: () => '#/jobs', ready: '[data-testid="jobs-table"] [data-row-key]', dialog: { clicks: ['[data-testid="trigger-daily-report"]'], ready: '[data-testid="trigger-summary"]' } },
  { name: 'job-editor', hash: () => `#/jobs/${jobId}`, ready: '[data-testid="view-job-editor"] [data-testid="preview-item"]' },
  { name: 'runs', hash: () => `#/runs/${jobId}`, ready: '[data-testid="ledger-table"] [data-row-key]' },
  { name: 'runs-frequent', hash: () => `#/runs/${daily.frequentJob}`, ready: '[data-testid="ledger-days"]' },
  { name: 'runs-backfilled', hash: () => `#/runs/${daily.backfillJob}?slot=${encodeURIComponent(daily.backfilledSlot)}`, ready: '[data-testid="slot-timeline"]' },
  { name: 'runs-verified', hash: () => `#/runs/${daily.checkedJob}?slot=${encodeURIComponent(daily.checkedSlot)}`, ready: '[data-testid="verification-check"]', scrollTo: '[data-testid="verification"]' },
  { name: 'runs-every-job', hash: () => '#/runs?all=1', ready: '[data-testid="all-runs-table"] [data-row-key]' },
  { name: 'why', hash: () => `#/why/${jobId}`, ready: '[data-testid="why-verdict"]' },
  { name: 'why-signal', hash: () => `#/why/${daily.readyJob}?at=${encodeURIComponent(new Date(Date.now() + 86_400_000).toISOString())}`, ready: '[data-testid="why-fixes"]' },
  { name: 'tasks', hash: () => '#/tasks?q=billing%20ledger', ready: '[data-testid="tasks-table"] [data-row-key]' },
  { name: 'tasks-bulk', hash: () => '#/tasks?q=billing%20ledger', ready: '[data-testid="tasks-table"] [data-row-key]', dialog: { clicks: ['[data-testid="tasks-pick-all"]', '[data-testid="bulk-reprioritise"]'], ready: '[data-testid="dialog-bulk-reprioritise"]' } },
  { name: 'signals', hash: () => '#/signals', ready: '[data-testid="signals-table"] [data-row-key]' },
  { name: 'signal-set', hash: () => '#/signals', ready: '[data-testid="signals-table"] [data-row-key]', dialog: { clicks: ['[data-testid="signal-set-open"]'], ready: '[data-testid="dialog-signal-set"]' } },
  { name: 'calendars', hash: () => '#/calendars/cn-workdays', ready: '[data-testid="calendar-editor"]' },
  { name: 'managed', hash: () => '#/managed', ready: '[data-testid="managed-table"] [data-row-key]' },
  { name: 'managed-agent', hash: () => '#/managed/night-watch', ready: '[data-testid="managed-detail"] [data-testid="managed-output"]' },
  { name: 'audit', hash: () => '#/audit', ready: '[data-testid="audit-row"]' },
  { name: 'settings', hash: () => '#/settings', ready: '[data-testid="kill-switch-panel"]' },
];

/**
 * Every view, in each theme, at both window sizes. axe runs once per view and theme (its WCAG rules
 * depend on the colours, not on the window size), at the small size where most goes wrong; the
 * clipping check and the picture are taken at both sizes, resizing in place rather than navigating
 * twice — this sweep is the most expensive part of the e2e suite.
 */
const SIZES = [
  { width: 1024, height: 700, axe: true },
  { width: 1440, height: 900, axe: false },
] as const;

describe('every view at 1024×700 and 1440×900', () => {
  for (const theme of ['dark', 'light'] as const) {
    it(`${theme}: axe finds nothing serious, no action is cut off`, async () => {
      const { page, errors } = await openConsole(browser, g, { ...SIZES[0], colorScheme: theme });
      const problems: string[] = [];
      // The check itself first: a button without a name is a critical axe finding (an axe that ran no
      // rule would pass every view below).
      await page.evaluate(() => document.body.append(Object.assign(document.createElement('button'), { id: 'axe-self-check' })));
      expect((await axeFindings(page)).map((f) => f.id)).toContain('button-name');
      await page.evaluate(() => document.getElementById('axe-self-check')!.remove());
      for (const v of VIEWS) {
        await page.setViewportSize(SIZES[0]);
        await go(page, v.hash(), v.ready);
        for (const c of v.dialog?.clicks ?? []) await page.click(c);
        if (v.dialog) await page.waitForSelector(v.dialog.ready);
        if (v.scrollTo) await page.locator(v.scrollTo).scrollIntoViewIfNeeded();
        await page.waitForTimeout(150); // let live refreshes settle before the picture
        for (const size of SIZES) {
          const at = `${v.name} at ${size.width}×${size.height}`;
          if (size !== SIZES[0]) {
            await page.setViewportSize(size);
            await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))); // let resize observers lay out
            if (v.scrollTo) await page.locator(v.scrollTo).scrollIntoViewIfNeeded();
          }
          await snap(page, `views/${size.width}x${size.height}-${theme}-${v.name}`);
          if (size.axe) for (const f of await axeFindings(page)) problems.push(`${at}: axe ${f.impact} ${f.id} (${f.help}): ${f.nodes.join(' | ')}`);
          for (const c of await clippedActions(page)) problems.push(`${at}: ${c}`);
        }
        // Words: no spec references, no bare rule ids (Settings lists the rules with their meaning).
        const text = (await page.textContent('main')) ?? '';
        if (/SPEC|§/.test(text)) problems.push(`${v.name}: says "SPEC §"`);
        if (v.name !== 'settings' && /\bP[1-5]\b/.test(text)) problems.push(`${v.name}: a bare rule id (${/\bP[1-5]\b/.exec(text)![0]})`);
        if (v.dialog) {
          await page.keyboard.press('Escape');
          await page.waitForSelector('[role="dialog"]', { state: 'detached' });
        }
      }
      await page.context().close();
      expect(problems).toEqual([]);
      expect(errors).toEqual([]);
    }, 600_000); // 28 views × two sizes: about a minute on a quiet machine, several under heavy load
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
    const row = `[data-testid="jobs-table"] [data-row-key="${jobId}"]`;
    expect(await page.textContent(row)).toContain('every workday at 09:00');
    expect(await page.textContent(row)).not.toContain('every day');
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
    // It overlays the board (not the toolbar above it, whose "+ New task" stays in reach).
    expect(geo.position).toBe('absolute');
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
  it('tasks: the server finds every match; a bulk action over all of them runs in chunks with a progress bar, one audit row per task', async () => {
    await go(page, '#/tasks', '[data-testid="view-tasks"]');
    await page.fill('input[name="tasks-q"]', 'billing ledger');
    await until(async () => ((await page.textContent('[data-testid="tasks-total"]')) ?? '').includes(`${daily.imports} tasks match`), 'the server-side count');
    expect(await page.evaluate(() => window.location.hash)).toBe('#/tasks?q=billing%20ledger');
    // An id finds its task too.
    await page.fill('input[name="tasks-q"]', `#${daily.failedTask}`);
    await until(async () => (await page.$$('[data-testid="tasks-table"] [data-row-key]')).length === 1, 'the task found by its id');
    await page.fill('input[name="tasks-q"]', 'billing ledger');
    await until(async () => ((await page.textContent('[data-testid="tasks-total"]')) ?? '').includes(`${daily.imports} tasks match`), 'the count again');
    await page.click('[data-testid="tasks-pick-all"]');
    await page.click('[data-testid="bulk-select-matching"]');
    expect(await page.textContent('[data-testid="bulk-count"]')).toContain(`All ${daily.imports} matching tasks`);
    await page.click('[data-testid="bulk-cancel"]');
    await page.waitForSelector('[data-testid="dialog-bulk-cancel"]');
    expect(await page.textContent('[data-testid="bulk-confirm"]')).toBe(`Cancel ${daily.imports} tasks`);
    await snap(page, 'daily-4-bulk-confirm');
    expect(await axeFindings(page)).toEqual([]);
    await page.fill('[data-testid="dialog-bulk-cancel"] textarea[name="reason"]', 'e2e: the billing ledger import is retired');
    await page.click('[data-testid="bulk-confirm"]');
    await page.waitForSelector('[data-testid="dialog-bulk"] [role="progressbar"]');
    await page.waitForSelector('[data-testid="bulk-close"]', { timeout: 60_000 });
    expect(await page.textContent('[data-testid="bulk-progress"]')).toMatch(new RegExp(`^${daily.imports} cancelled — ${daily.imports} of ${daily.imports} looked at, 3 steps of at most 200`));
    await snap(page, 'daily-5-bulk-done');
    await page.click('[data-testid="bulk-close"]');
    const audit = await apiCall<{ items: Array<{ subject: string; actor: string; detail: { reason: string; bulk?: string } }> }>(g, 'GET', '/audit?type=operator.cancel&limit=1000');
    const rows = audit.items.filter((e) => e.detail.reason === 'e2e: the billing ledger import is retired');
    expect(rows).toHaveLength(daily.imports);
    expect(new Set(rows.map((e) => e.subject)).size).toBe(daily.imports);
    expect(new Set(rows.map((e) => `${e.actor} ${e.detail.bulk?.slice(0, 5)}`))).toEqual(new Set(['operator:browser bulk_']));
    expect(new Set(rows.map((e) => e.detail.bulk)).size).toBe(1);
  }, 120_000);

  it('a failed task is retried with a changed payload, in one step', async () => {
    await go(page, `#/queues/builder?task=${daily.failedTask}`, '[data-testid="action-retryWithChanges"]');
    await page.click('[data-testid="action-retryWithChanges"]');
    await page.waitForSelector('[data-testid="dialog-retryWithChanges"]');
    expect(JSON.parse(await page.inputValue('[data-testid="dialog-retryWithChanges"] textarea[name="payload"]'))).toEqual({ branch: 'main' });
    await page.fill('[data-testid="dialog-retryWithChanges"] textarea[name="payload"]', '{"branch": "release-1.4"}');
    await page.fill('[data-testid="dialog-retryWithChanges"] textarea[name="reason"]', 'e2e: build the release branch');
    await page.click('[data-testid="dialog-retryWithChanges"] button[type="submit"]');
    await until(async () => {
      const t = (await apiCall<{ task: { status: string; payload: unknown } }>(g, 'GET', `/tasks/${daily.failedTask}`)).task;
      return t.status === 'backlog' && (t.payload as { branch?: string }).branch === 'release-1.4';
    }, 'the task back in the backlog with the new payload');
    const types = (await apiCall<{ items: Array<{ type: string }> }>(g, 'GET', `/audit?subject=task:${daily.failedTask}`)).items.map((e) => e.type);
    expect(types.slice(-2)).toEqual(['operator.edit_payload', 'operator.retry']);
  });

  it('trigger now names its slot before it runs: the slot already run is not offered again; the one before is run', async () => {
    const choices = (await consoleCall('jobs.triggerChoices', { id: jobId })) as { choices: Array<{ which: string; slot: string; effect: string }> };
    const current = choices.choices.find((c) => c.which === 'current')!;
    const previous = choices.choices.find((c) => c.which === 'previous')!;
    expect(current.effect).toBe('exists'); // the seeding ran it
    await go(page, '#/jobs', '[data-testid="jobs-table"] [data-row-key]');
    await page.click('[data-testid="trigger-daily-report"]');
    await page.waitForSelector('[data-testid="trigger-slots"]');
    expect(await page.isDisabled('[data-testid="trigger-slot-current"] input')).toBe(true);
    expect(await page.textContent('[data-testid="trigger-slot-current"]')).toContain(`${current.slot}`);
    expect(await page.textContent('[data-testid="trigger-slot-current"]')).toContain('nothing new');
    expect(await page.isChecked('[data-testid="trigger-slot-previous"] input')).toBe(true);
    expect(await page.textContent('[data-testid="trigger-summary"]')).toContain(`Runs slot ${previous.slot} now.`);
    expect(await page.textContent('[data-testid="trigger-confirm"]')).toBe(`Run ${previous.slot}`);
    await snap(page, 'daily-6-trigger-slot');
    expect(await axeFindings(page)).toEqual([]);
    await page.fill('[data-testid="dialog-job-trigger"] textarea[name="reason"]', 'e2e: yesterday’s numbers were wrong');
    await page.click('[data-testid="trigger-confirm"]');
    await page.waitForSelector('[data-testid="dialog-job-trigger"]', { state: 'detached' });
    await until(async () => (await apiCall<{ items: Array<{ slot: string }> }>(g, 'GET', `/runs?job=${jobId}`)).items.some((r) => r.slot === previous.slot), 'a run of the slot named');
  });

  it('why didn’t it run: the missing signal is the blocking cause and a button sets it; the Signals view lists and clears it', async () => {
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    await go(page, `#/why/${daily.readyJob}?at=${encodeURIComponent(tomorrow)}`, '[data-testid="why-fix-signal"]');
    const fix = (await page.textContent('[data-testid="why-fix-signal"]'))!;
    const key = /for (\S+)$/.exec(fix)![1]!;
    expect(fix).toBe(`Set signal data-ready for ${key}`);
    // Evidence instants read in local time, the ISO instant on hover.
    expect(await page.$$eval('[data-testid="layer-time"] time.localtime', (t) => t.every((x) => /Z \(UTC\)$/.test(x.getAttribute('title') ?? '')))).toBe(true);
    await snap(page, 'daily-7-why-fix');
    await page.click('[data-testid="why-fix-signal"]');
    await page.fill('[data-testid="dialog-why-fix-signal"] textarea[name="reason"]', 'e2e: the load for tomorrow is in early');
    await page.click('[data-testid="dialog-why-fix-signal"] button[type="submit"]');
    await until(async () => (await page.$('[data-testid="why-fix-signal"]')) === null && (await page.$('[data-testid="why-verdict"]')) !== null, 'the fix gone once the signal is set');
    await go(page, '#/signals', `[data-testid="clear-data-ready-${key}"]`);
    const row = page.locator('[data-testid="signals-table"] [data-row-key]', { hasText: key });
    expect(await row.textContent()).toContain('operator:browser');
    expect(await page.textContent('[data-testid="signal-waiters"]')).toContain('ready-report');
    await snap(page, 'daily-8-signals');
    await page.click(`[data-testid="clear-data-ready-${key}"]`);
    await page.fill('[data-testid="dialog-signal-clear"] textarea[name="reason"]', 'e2e: set by mistake');
    await page.click('[data-testid="dialog-signal-clear"] button[type="submit"]');
    await until(async () => (await page.$(`[data-testid="clear-data-ready-${key}"]`)) === null, 'the signal cleared');
    const trail = (await apiCall<{ items: Array<{ type: string; actor: string; detail: { reason?: string } }> }>(g, 'GET', `/audit?subject=${encodeURIComponent(`signal:data-ready/${key}`)}`)).items;
    expect(trail.map((e) => [e.type, e.actor, e.detail.reason])).toEqual([
      ['signal.set', 'operator:browser', 'e2e: the load for tomorrow is in early'],
      ['signal.clear', 'operator:browser', 'e2e: set by mistake'],
    ]);
  });

  it('runs: every job in one ledger; a frequent job reads as days → hours → slots; a backfilled slot shows its backfill', async () => {
    await go(page, `#/runs?all=1&job=${daily.backfillJob}`, '[data-testid="all-runs-table"] [data-row-key]');
    expect(new Set(await page.$$eval('[data-testid="all-runs-table"] [data-row-key]', (r) => r.map((x) => x.textContent?.includes('fragile-backfill'))))).toEqual(new Set([true]));
    // The slot opens in its job's ledger: the backfill's instance and timeline, the first error as an earlier one.
    await page.click('[data-testid="all-runs-table"] [data-row-key]');
    await page.waitForSelector('[data-testid="slot-timeline"]');
    expect(await page.textContent('[data-testid="slot-instance"]')).toMatch(/inst_\S+ \(backfill #\d+\)/);
    expect(await page.textContent('[data-testid="slot-timeline"]')).toMatch(/queued for backfill #\d+.*dispatched to inst_.*backfill #\d+ done/);
    expect(await page.textContent('[data-testid="slot-detail"]')).toContain('Earlier error');
    expect(await page.textContent('[data-testid="slot-detail"]')).not.toContain('Last error');
    await snap(page, 'daily-9-backfilled-slot');
    // A job every minute: no wall of slots, no "99+": days, then hours, then the slots of an hour.
    await go(page, `#/runs/${daily.frequentJob}`, '[data-testid="ledger-days"]');
    expect(await page.textContent('[data-testid="heatmap"]')).not.toContain('99+');
    expect(await page.$('[data-testid="ledger-table"]')).toBeNull();
    await until(async () => (await page.$$('[data-testid="ledger-days"] [data-row-key]')).length > 0, 'a day with slots due');
    await page.click('[data-testid="ledger-days"] [data-row-key]');
    await page.waitForSelector('[data-testid="ledger-hours"] [data-row-key]');
    await page.click('[data-testid="ledger-hours"] [data-row-key]');
    await page.waitForSelector('[data-testid="ledger-table"] [data-row-key]');
    expect((await page.$$('[data-testid="ledger-table"] [data-row-key]')).length).toBeLessThanOrEqual(60);
    // The job is disabled: its slots due since read as skipped, not as runs that went missing.
    expect(await page.textContent('[data-testid="ledger-table"]')).toContain('skipped: disabled');
    expect(await page.textContent('[data-testid="ledger-table"]')).not.toContain('no run recorded');
    expect(await page.textContent('[data-testid="ledger-crumbs"]')).toMatch(/every day.*›.*›/);
    await snap(page, 'daily-10-frequent-hour');
    expect(errors).toEqual([]);
  });
});
