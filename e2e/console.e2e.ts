/**
 * The console against a real headless Gaffer, real agents (SDK) and Chromium.
 * Timings are shortened: lock window 5 s, heartbeat timeout 4 s, sweep 1 s, reconnect grace 1 s.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyExport } from '../src-main/core/audit/audit-export';
import type { Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, shot, sleep, spawnAgent, startAgent, startGaffer, until, type Gaffer } from './harness';

let g: Gaffer;
let browser: Browser;
let page: Page;
let errors: string[];
const agents: Agent[] = [];
const children: Array<{ proc: import('node:child_process').ChildProcess }> = [];

interface ApiTask {
  id: number;
  title: string;
  role: string;
  status: string;
}

async function createTask(title: string, role: string, extra: Record<string, unknown> = {}): Promise<ApiTask> {
  const r = await apiCall<{ task: ApiTask }>(g, 'POST', '/tasks', { title, role, ...extra });
  return r.task;
}

beforeAll(async () => {
  g = await startGaffer();
  // Seed a believable board: three roles, dependencies, work done by real agents.
  const devToken = await createAgentToken(g, 'dev worker', 'dev');
  const pmToken = await createAgentToken(g, 'pm planner', 'pm');
  await createAgentToken(g, 'spare laptop token');
  const spec = await createTask('Write the release plan', 'pm', { priority: 5 });
  await createTask('Triage incoming bug reports', 'pm');
  const impl = await createTask('Implement the export button', 'dev', { priority: 3, dependsOn: [spec.id] });
  await createTask('Add CSV escaping tests', 'dev', { dependsOn: [impl.id] });
  for (let i = 1; i <= 6; i++) await createTask(`Refactor module ${i}`, 'dev', { priority: i % 3 });
  for (let i = 1; i <= 3; i++) await createTask(`Review PR #${100 + i}`, 'reviewer');
  // A dev agent finishes four tasks (throughput), reporting one failed and one blocked.
  const dev = await startAgent(g, devToken, 'dev', 'dev-worker-1');
  agents.push(dev);
  let n = 0;
  await dev.work(
    async ({ task }) => {
      n++;
      if (n === 3) throw Object.assign(new Error('compiler crashed'), {});
      return { output: { done: task.title } };
    },
    { maxTasks: 4, idleDelayMs: 100 },
  );
  // One more claimed and reported blocked by hand (the SDK's BlockedError path).
  const c = await dev.claim();
  if (c) await dev.report(c.task.id, c.lock.fence, 'blocked', { note: 'waiting for API credentials' });
  // The pm agent stays online holding one task, renewing its lock.
  const pm = await startAgent(g, pmToken, 'pm', 'pm-planner');
  agents.push(pm);
  void pm.work(async ({ signal }) => new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true })), { maxTasks: 1, idleDelayMs: 200 });
  browser = await launchBrowser();
  ({ page, errors } = await openConsole(browser, g));
}, 180_000);

afterAll(async () => {
  for (const c of children) c.proc.kill('SIGKILL');
  await Promise.all(agents.map((a) => a.close({ timeoutMs: 500 }).catch(() => {})));
  await browser?.close();
  await g?.stop();
});

describe('console views on real data', () => {
  it('dashboard shows counts, charts and queue health', async () => {
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    await until(async () => (await page.textContent('[data-testid="stat-online"] .stat-value'))?.trim() === '2', 'two online instances');
    await page.waitForSelector('[data-testid="chart-distribution"] .recharts-bar-rectangle');
    await page.waitForSelector('[data-testid="chart-throughput"] .recharts-bar-rectangle');
    expect(await page.textContent('[data-testid="stat-completed"]')).toMatch(/[1-9]/);
    expect(await page.textContent('[data-testid="stat-recovery"]')).toContain('≈ 5 s');
    expect(await page.textContent('[data-testid="stat-recovery"]')).toContain('abandoned task');
    const health = await page.textContent('[data-testid="queue-health"]');
    expect(health).toContain('reviewer'); // reviewer has ready work and nobody online
    await page.waitForSelector('[data-testid="stuck-callout"]');
    expect(await page.textContent('[data-testid="stuck-callout"]')).toContain('reviewer');
    await shot(page, '01-dashboard');
  });

  it('role queues show columns, holders, countdowns and blockers', async () => {
    await go(page, '#/queues/pm', '[data-testid="view-queues"]');
    await page.waitForSelector('[data-testid="column-in_progress"] [data-testid^="task-"]');
    const inProg = await page.textContent('[data-testid="column-in_progress"]');
    expect(inProg).toContain('pm-planner');
    expect(await page.locator('[data-testid="column-in_progress"] .countdown').count()).toBeGreaterThan(0);
    await go(page, '#/queues/dev', '[data-testid="role-tab-dev"][aria-selected="true"]');
    await page.waitForSelector('[data-testid="column-backlog"] [data-testid^="task-"]');
    const backlog = await page.textContent('[data-testid="column-backlog"]');
    expect(backlog).toMatch(/waits on\s*#\d+/);
    expect(await page.textContent('[data-testid="column-blocked"]')).toMatch(/Failed|Blocked/);
    await page.waitForSelector('[data-testid="column-done"] [data-testid^="task-"]'); // each column loads its own page
    expect(await page.textContent('[data-testid="column-done"]')).toMatch(/#\d+/);
    await shot(page, '02-queues');
    // The detail pane lists dependency blockers with their status (P3).
    const waiting = page.locator('[data-testid="column-backlog"] [data-testid^="task-"]').first();
    await waiting.click();
    await page.waitForSelector('[data-testid="task-detail"] .dep-list li .badge');
    expect(await page.textContent('[data-testid="task-detail"]')).toContain('invisible to claimers');
    await shot(page, '03-queues-task-detail');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="task-detail"]', { state: 'detached' });
  });

  it('leaving a view is never undone by it, even when it renders between the hash change and its event', async () => {
    await go(page, '#/queues/dev', '[data-testid="view-queues"]');
    // A busy event stream re-renders the current view at any moment; here the filter input does it
    // after the hash has changed but before \`hashchange\` is delivered. The queues view then sees a
    // route without a role; it must not "pick a role" and send the operator back.
    await page.evaluate(() => {
      window.location.hash = '#/dashboard';
      const input = document.querySelector('input[data-view-filter]') as HTMLInputElement;
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(input, 'x');
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    await page.waitForSelector('[data-testid="view-dashboard"]');
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => window.location.hash)).toBe('#/dashboard');
    expect(await page.locator('[data-testid="view-queues"]').count()).toBe(0);
  });

  it('instances list roles, heartbeats and held locks; tokens are listed', async () => {
    await go(page, '#/instances', '[data-testid="view-instances"]');
    await page.waitForSelector('[data-testid="instances-table"] [data-row-key]');
    const t = await page.textContent('[data-testid="instances-table"]');
    expect(t).toContain('pm-planner');
    expect(t).toContain('dev-worker-1');
    expect(t).toMatch(/ago|just now/);
    await until(async () => /#\d+/.test((await page.textContent('[data-testid="instances-table"]')) ?? ''), 'a held lock');
    expect(await page.textContent('[data-testid="tokens-table"]')).toContain('spare laptop token');
    await shot(page, '04-instances');
  });

  it('settings show timings, recovery bound and where Gaffer runs', async () => {
    await go(page, '#/settings', '[data-testid="view-settings"]');
    const t = await page.textContent('[data-testid="view-settings"]');
    expect(t).toContain('min(5, 4) + 1 = 5 s');
    expect(t).toContain(String(g.port));
    expect(t).toContain(g.dataDir);
    // The HTTP API reference is linked, and the link opens without the operator token.
    const href = await page.getAttribute('[data-testid="api-reference"] a', 'href');
    expect(href).toBe('/api/v1/openapi.json');
    const doc = await page.evaluate(async (u) => (await fetch(u, { credentials: 'omit' })).json(), href!);
    expect(doc.openapi).toBe('3.1.0');
    await shot(page, '05-settings');
  });

  it('audit browser lists events newest first with a detail pane', async () => {
    await go(page, '#/audit', '[data-testid="view-audit"]');
    await page.waitForSelector('[data-testid="audit-row"]');
    const ids = await page.$$eval('[data-testid="audit-row"]', (rows) => rows.slice(0, 5).map((r) => Number(r.getAttribute('data-id'))));
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    await page.locator('[data-testid="audit-row"]').nth(2).click();
    await page.waitForSelector('[data-testid="audit-detail"]');
    const detail = await page.textContent('[data-testid="audit-detail"]');
    expect(detail).toMatch(/[0-9a-f]{64}/);
    await shot(page, '06-audit');
    await page.keyboard.press('Escape');
  });

  it('jobs entry: an empty list that says what to do (the jobs views have their own spec, jobs.e2e.ts)', async () => {
    await go(page, '#/jobs', '[data-testid="view-jobs"]');
    expect(await page.textContent('[data-testid="view-jobs"]')).toContain('No jobs yet');
  });
});

describe('live flows', () => {
  let taskId = 0;
  let holder: Awaited<ReturnType<typeof spawnAgent>>;

  it('a task created in the UI appears in its role queue (with field validation)', async () => {
    await go(page, '#/queues/dev', '[data-testid="view-queues"]');
    await page.click('[data-testid="create-task"]');
    await page.waitForSelector('[data-testid="dialog-create-task"]');
    // Validation at the field: bad role and payload are refused before anything is sent.
    await page.fill('[data-testid="dialog-create-task"] input[name="title"]', 'Ship the console');
    await page.fill('[data-testid="dialog-create-task"] input[name="role"]', 'bad role!');
    await page.fill('[data-testid="dialog-create-task"] textarea[name="payload"]', '{oops');
    await page.click('[data-testid="dialog-create-task"] button[type="submit"]');
    await page.waitForSelector('[data-testid="error-role"]');
    await page.waitForSelector('[data-testid="error-payload"]');
    await shot(page, '07-create-task-validation');
    await page.fill('[data-testid="dialog-create-task"] input[name="role"]', 'e2e');
    await page.fill('[data-testid="dialog-create-task"] textarea[name="payload"]', '{"ticket": 42}');
    await page.fill('[data-testid="dialog-create-task"] input[name="priority"]', '7');
    await page.click('[data-testid="dialog-create-task"] button[type="submit"]');
    await page.waitForSelector('[data-testid="dialog-create-task"]', { state: 'detached' });
    await page.waitForSelector('[data-testid="role-tab-e2e"][aria-selected="true"]');
    const card = page.locator('[data-testid="column-ready"] [data-testid^="task-"]', { hasText: 'Ship the console' });
    await card.waitFor();
    taskId = Number((await card.getAttribute('data-testid'))!.replace('task-', ''));
    expect(taskId).toBeGreaterThan(0);
  });

  it('an agent claiming it moves it to In progress', async () => {
    const token = await createAgentToken(g, 'e2e holder', 'e2e');
    holder = await spawnAgent(g, 'hold-agent.ts', { GAFFER_TOKEN: token, ROLE: 'e2e', NAME: 'e2e-holder', TASK_ID: String(taskId) });
    children.push(holder);
    await holder.waitFor(new RegExp(`^claimed ${taskId} `));
    const card = page.locator(`[data-testid="column-in_progress"] [data-testid="task-${taskId}"]`);
    await card.waitFor({ timeout: 15_000 });
    // The holder's name arrives with the instances list, which may refresh a moment after the card moves.
    await page.locator(`[data-testid="column-in_progress"] [data-testid="task-${taskId}"] .holder`, { hasText: 'e2e-holder' }).waitFor({ timeout: 15_000 });
    await shot(page, '08-claimed-in-progress');
  });

  it('killing the agent produces an expired-lock card after the shortened window', async () => {
    const killedAt = Date.now();
    holder.proc.kill('SIGKILL');
    await go(page, '#/locks', '[data-testid="view-locks"]');
    const card = page.locator(`[data-testid="expired-card-${taskId}"]`);
    await card.waitFor({ timeout: 30_000 });
    const recoveredS = (Date.now() - killedAt) / 1000;
    console.log(`e2e: expired-lock card shown ${recoveredS.toFixed(1)} s after kill -9 (bound ≈ 5 s + UI refresh)`);
    const text = await card.textContent();
    expect(text).toContain('e2e-holder');
    expect(text).toMatch(/not yet|by /);
    // The task is back in Ready, marked previously expired.
    await go(page, `#/queues/e2e`, '[data-testid="view-queues"]');
    const back = page.locator(`[data-testid="column-ready"] [data-testid="task-${taskId}"]`);
    await back.waitFor({ timeout: 15_000 });
    expect(await back.textContent()).toContain('prev. expired');
    await go(page, '#/locks', `[data-testid="expired-card-${taskId}"]`);
    await shot(page, '09-expired-locks');
  });

  it('a re-claim fills in "re-claimed by" on the card', async () => {
    const token = await createAgentToken(g, 'e2e rescuer', 'e2e');
    const rescuer = await spawnAgent(g, 'hold-agent.ts', { GAFFER_TOKEN: token, ROLE: 'e2e', NAME: 'e2e-rescuer', TASK_ID: String(taskId) });
    children.push(rescuer);
    await rescuer.waitFor(new RegExp(`^claimed ${taskId} 2`));
    await until(async () => ((await page.textContent(`[data-testid="expired-card-${taskId}"] [data-testid="reclaimed"]`)) ?? '').includes('e2e-rescuer'), 're-claimed by e2e-rescuer', 20_000);
    await shot(page, '10-expired-reclaimed');
  });

  it('force-release needs a reason (once Settings require one) and is audited', async () => {
    // A solo operator's default is "reason optional"; a team turns "Require a reason for actions" on.
    await go(page, '#/settings', '[data-testid="reason-setting"]');
    await page.click('[data-testid="require-reason"]'); // saved on the server, then shown checked
    await until(async () => page.isChecked('[data-testid="require-reason"]'), 'reasons required');
    await go(page, `#/queues/e2e?task=${taskId}`, '[data-testid="task-detail"]');
    await page.click('[data-testid="action-forceRelease"]');
    await page.waitForSelector('[data-testid="dialog-forceRelease"]');
    await page.click('[data-testid="dialog-forceRelease"] button[type="submit"]');
    await page.waitForSelector('[data-testid="dialog-forceRelease"] .field-error');
    expect(await page.textContent('[data-testid="dialog-forceRelease"]')).toContain('A reason is required');
    await shot(page, '11-reason-required');
    await page.fill('[data-testid="dialog-forceRelease"] textarea[name="reason"]', 'e2e: rescuer looks stuck');
    await page.click('[data-testid="dialog-forceRelease"] button[type="submit"]');
    await page.waitForSelector('[data-testid="dialog-forceRelease"]', { state: 'detached' });
    await until(async () => {
      const r = await apiCall<{ items: Array<{ type: string; detail: { reason?: string } }> }>(g, 'GET', `/audit?subject=task:${taskId}&limit=100`);
      return r.items.some((e) => e.type === 'operator.force_release');
    }, 'an operator.force_release audit row');
  });

  it('tokens: created once with a copyable secret, revoked with a reason', async () => {
    await go(page, '#/instances', '[data-testid="tokens-panel"]');
    await page.click('[data-testid="create-token"]');
    await page.fill('[data-testid="dialog-create-token"] input[name="name"]', 'ui-made token');
    await page.fill('[data-testid="dialog-create-token"] input[name="role"]', 'dev');
    await page.click('[data-testid="dialog-create-token"] button[type="submit"]');
    await page.waitForSelector('[data-testid="token-secret"]');
    const secret = (await page.textContent('[data-testid="token-secret"]'))!.trim();
    expect(secret.length).toBeGreaterThan(20);
    await shot(page, '12-token-secret');
    await page.click('[data-testid="dialog-token-secret"] .dialog-actions button');
    const row = page.locator('[data-testid="tokens-table"] [data-row-key]', { hasText: 'ui-made token' });
    await row.waitFor();
    expect(await page.textContent('[data-testid="tokens-table"]')).not.toContain(secret);
    await row.locator('button', { hasText: 'Revoke' }).click();
    await page.fill('[data-testid="dialog-revoke-token"] textarea[name="reason"]', 'e2e: done with it');
    await page.click('[data-testid="dialog-revoke-token"] button[type="submit"]');
    await until(async () => (await row.count()) === 0, 'the revoked token to leave the active list');
  });

  it('kill switch: on with a reason shows in the header, then off', async () => {
    await go(page, '#/settings', '[data-testid="kill-switch-panel"]');
    await page.click('[data-testid="kill-switch-toggle"]');
    await page.fill('[data-testid="dialog-kill-switch"] textarea[name="reason"]', 'e2e: maintenance');
    await page.click('[data-testid="dialog-kill-switch"] button[type="submit"]');
    await until(async () => ((await page.textContent('[data-testid="kill-indicator"]')) ?? '').includes('KILL SWITCH ON'), 'the header kill-switch indicator');
    await shot(page, '13-kill-switch-on');
    await page.click('[data-testid="kill-switch-toggle"]');
    await page.fill('[data-testid="dialog-kill-switch"] textarea[name="reason"]', 'e2e: maintenance over');
    await page.click('[data-testid="dialog-kill-switch"] button[type="submit"]');
    await until(async () => ((await page.textContent('[data-testid="kill-indicator"]')) ?? '').includes('off'), 'the kill switch off');
  });
});

describe('audit export and verification', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-e2e-dl-'));

  async function exportVia(button: string): Promise<string> {
    const [download] = await Promise.all([page.waitForEvent('download', { timeout: 60_000 }), page.click(button)]);
    const file = path.join(tmp, download.suggestedFilename());
    await download.saveAs(file);
    await page.waitForSelector('[data-testid="export-file"]');
    return file;
  }

  it('exports the whole log as JSONL and the rows verify (hash chain)', async () => {
    await go(page, '#/audit', '[data-testid="view-audit"]');
    if (await page.isEnabled('[data-testid="audit-reset"]')) await page.click('[data-testid="audit-reset"]');
    await page.waitForSelector('[data-testid="audit-row"]');
    const file = await exportVia('[data-testid="export-jsonl"]');
    const check = await verifyExport(fs.createReadStream(file), 'jsonl', { expectContiguous: true });
    console.log(`e2e: JSONL export ${check.summary}`);
    expect(check.ok).toBe(true);
    expect(check.coverage).toBe('chain');
    expect(check.anchoredAtGenesis).toBe(true);
    expect(check.rows).toBeGreaterThan(20);
    expect(await page.textContent('[data-testid="export-rows"]')).toContain(`${check.rows.toLocaleString('en-US')} rows`);
    await shot(page, '14-audit-export');
  });

  it('exports a filtered range as CSV and its rows verify', async () => {
    await page.fill('input[name="audit-type"]', 'lock.claim');
    await page.keyboard.press('Enter');
    await until(async () => {
      const types = await page.$$eval('[data-testid="audit-row"] .badge', (b) => b.map((x) => x.textContent));
      return types.length > 0 && types.every((t) => t === 'lock.claim');
    }, 'the list filtered to lock.claim');
    const file = await exportVia('[data-testid="export-csv"]');
    const check = await verifyExport(fs.createReadStream(file), 'csv');
    console.log(`e2e: CSV export ${check.summary}`);
    expect(check.ok).toBe(true);
    expect(check.rows).toBeGreaterThan(3);
    const body = fs.readFileSync(file, 'utf8');
    expect(body.split('\r\n').slice(1).filter(Boolean).every((l) => l.includes(',lock.claim,'))).toBe(true);
  });

  it('verifies the live chain from the UI', async () => {
    await page.click('[data-testid="audit-reset"]');
    await page.click('[data-testid="verify-chain"]');
    await page.waitForSelector('[data-testid="verify-result"]');
    expect(await page.textContent('[data-testid="verify-result"]')).toContain('Chain verified');
    await shot(page, '15-audit-verified');
  });
});

describe('keyboard navigation', () => {
  it('g-chords, Ctrl+digit, / focuses the filter, ? shows help, Esc closes', async () => {
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('g');
    await page.keyboard.press('q');
    await page.waitForSelector('[data-testid="view-queues"]');
    await page.keyboard.press('g');
    await page.keyboard.press('i');
    await page.waitForSelector('[data-testid="view-instances"]');
    await page.keyboard.press('Control+8');
    await page.waitForSelector('[data-testid="view-audit"]');
    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('audit-text');
    // Typing in the filter never navigates.
    await page.keyboard.type('gd');
    await sleep(300);
    expect(await page.locator('[data-testid="view-audit"]').count()).toBe(1);
    await page.keyboard.press('Escape');
    await page.keyboard.press('Shift+?');
    await page.waitForSelector('[data-testid="shortcut-help"]');
    await shot(page, '16-shortcuts');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="shortcut-help"]', { state: 'detached' });
    await page.keyboard.press('g');
    await page.keyboard.press('s');
    await page.waitForSelector('[data-testid="view-settings"]');
    await page.keyboard.press('g');
    await page.keyboard.press('a');
    await page.waitForSelector('[data-testid="view-audit"]');
    // Arrow keys move through the audit list.
    await page.fill('input[name="audit-text"]', '');
    // From the row clicked (a row arriving live on top meanwhile moves the first row, not the selection).
    const clicked = await page.locator('[data-testid="audit-row"]').first().getAttribute('data-id');
    await page.click(`[data-testid="audit-row"][data-id="${clicked}"]`);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    const sel = await page.getAttribute('[data-testid="audit-row"].selected', 'data-id');
    expect(Number(sel)).toBe(Number(clicked) - 2);
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="audit-detail"]', { state: 'detached' });
  });

  it('light theme screenshots and no page errors', async () => {
    const light = await openConsole(browser, g, { colorScheme: 'light' });
    await light.page.waitForSelector('[data-testid="chart-throughput"] .recharts-bar-rectangle');
    await shot(light.page, '17-dashboard-light');
    await go(light.page, '#/queues/dev', '[data-testid="column-done"] [data-testid^="task-"]');
    await shot(light.page, '18-queues-light');
    await go(light.page, '#/audit', '[data-testid="audit-row"]');
    await shot(light.page, '19-audit-light');
    await light.page.context().close();
    expect(errors).toEqual([]);
    expect(light.errors).toEqual([]);
  });
});

describe('when Gaffer goes away', () => {
  it('the header and the views say so, with the error code', async () => {
    await go(page, '#/instances', '[data-testid="instances-table"]');
    await g.stop();
    await until(async () => /reconnecting|offline/.test((await page.textContent('[data-testid="conn-status"]')) ?? ''), 'the connection indicator to drop', 20_000);
    // Switching views refetches: the call fails and the error says why, with its code.
    await go(page, '#/settings', '[data-testid="view-settings"]');
    await go(page, '#/instances', '[data-testid="view-instances"] .error-banner');
    expect(await page.textContent('[data-testid="conn-status"]')).toMatch(/offline \((unavailable|network)\)/);
    expect(await page.textContent('.error-banner')).toMatch(/unavailable|network/);
    await shot(page, '20-server-gone');
  });
});
