/**
 * The operator's attention in a real browser (Debian Chromium) against a real headless Gaffer and
 * a real SDK agent: a run that needs a human and a stuck queue show up in the Inbox (rail badge,
 * dashboard strip); the held run is approved from its item and runs again with `ctx.approval`; a
 * webhook to a receiver on 127.0.0.1 is set up in the Notifications tab, tested, and receives
 * the next item. At 1440×900 and 1024×700: no action clipped, no serious axe finding. The Tasks
 * list from the keyboard only (move, open in place, cancel, close), and its task pane at 1024×700.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NeedsHumanError, type Agent, type JobContext } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, snap, startAgent, startGaffer, until, type Gaffer } from './harness';
import { axeFindings, clippedActions } from './layout-check';

let g: Gaffer;
let browser: Browser;
let page: Page;
let errors: string[];
let agent: Agent;
const seen: JobContext[] = [];
const received: Array<{ path: string; body: any }> = [];
let receiver: http.Server;
let receiverUrl = '';

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(body) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/gaffer-secret-token`;
  g = await startGaffer();
  agent = await startAgent(g, await createAgentToken(g, 'ops agent', 'ops'), 'ops', 'ops-1');
  agent.onJob((ctx) => {
    seen.push(ctx);
    if (!ctx.approval) throw new NeedsHumanError('refund 40 EUR to customer 17?');
    return { refunded: 40 };
  });
  browser = await launchBrowser();
  ({ page, errors } = await openConsole(browser, g));
}, 180_000);

afterAll(async () => {
  await agent?.close({ timeoutMs: 500 }).catch(() => {});
  await browser?.close();
  await g?.stop();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

async function layoutProblems(p: Page, where: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of await axeFindings(p)) out.push(`${where}: axe ${f.impact} ${f.id} (${f.help}): ${f.nodes.join(' | ')}`);
  for (const c of await clippedActions(p)) out.push(`${where}: ${c}`);
  return out;
}

describe('the inbox', () => {
  it('a run that needs a human and a stuck queue are in the inbox, counted in the rail and on the dashboard', async () => {
    const { job } = await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'refunds', role: 'ops', schedule: { everyS: 86400 }, retry: { maxAttempts: 1 } });
    await apiCall(g, 'POST', `/jobs/${job.id}/trigger`, { reason: 'e2e' });
    await apiCall(g, 'POST', '/tasks', { title: 'write the release notes', role: 'docs' });
    // The docs queue has no instance: stuck after the recovery bound (5 s with the test timings).
    await until(async () => (await apiCall<{ items: unknown[] }>(g, 'GET', '/inbox')).items.length === 2, 'two inbox items', 30_000);
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    await until(async () => (await page.textContent('[data-testid="dashboard-inbox"]'))?.includes('2 items in the inbox (1 critical)'), 'the dashboard strip');
    expect(await page.textContent('[data-testid="nav-badge-inbox"]')).toBe('2');
    await snap(page, '60-dashboard-inbox-1440');
    await page.click('[data-testid="nav-inbox"]');
    await page.waitForSelector('[data-testid="inbox-list"]');
    const text = await page.textContent('[data-testid="inbox-list"]');
    expect(text).toContain('refunds');
    expect(text).toContain('needs a human');
    expect(text).toContain('refund 40 EUR to customer 17?');
    expect(text).toContain('Role docs: 1 task ready and no instance online');
    await page.click('[data-testid="inbox-list"] details summary >> nth=0');
    await snap(page, '61-inbox-1440');
    expect(await layoutProblems(page, 'inbox 1440×900')).toEqual([]);
  });

  it('from the keyboard only: the 4th item (the held run) is approved in a few keys, its dialog opens on the note, Enter confirms', async () => {
    // Two more roles with work and nobody to do it: four items, the held run the oldest (the 4th).
    await apiCall(g, 'POST', '/tasks', { title: 'translate the notes', role: 'docs2' });
    await apiCall(g, 'POST', '/tasks', { title: 'proofread the notes', role: 'docs3' });
    await until(async () => (await page.locator('[data-testid^="inbox-item-"]').count()) === 4, 'four items', 30_000);
    const texts = await page.locator('[data-testid^="inbox-item-"]').allTextContents();
    expect(texts.findIndex((t) => t.includes('needs a human'))).toBe(3);
    // g b (the Inbox), Home (first item), j j j (the 4th), a (approve): the dialog starts on the note.
    for (const key of ['g', 'b', 'Home', 'j', 'j', 'j']) await page.keyboard.press(key);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toMatch(/^inbox-item-/);
    expect(await page.evaluate(() => document.activeElement?.textContent ?? '')).toContain('needs a human');
    await page.keyboard.press('a');
    await page.waitForSelector('[data-testid="run-decision-dialog"]');
    expect(await page.evaluate(() => (document.activeElement as HTMLTextAreaElement | null)?.name)).toBe('reason');
    await page.keyboard.type('yes, goodwill refund');
    await snap(page, '62-inbox-approve-dialog-1440');
    await page.keyboard.press('Enter');
    await until(() => seen.length === 2, 'the approved run dispatched again');
    expect(seen[1]!.approval).toMatchObject({ decision: 'approved', note: 'yes, goodwill refund', by: 'operator:browser' });
    await until(async () => (await page.locator('[data-testid^="inbox-item-"]').count()) === 3, 'three items left');
    await page.click('[data-testid="inbox-state-acked"]');
    await until(async () => (await page.textContent('[data-testid="inbox-list"]'))?.includes('acknowledged by operator:browser'), 'the acknowledged list');
  });

  it('acknowledging with a note clears the rest; the badge goes', async () => {
    await page.click('[data-testid="inbox-state-open"]');
    await page.waitForSelector('[data-testid="inbox-select-all"]');
    await page.click('[data-testid="inbox-select-all"]');
    await page.click('[data-testid="inbox-ack-selected"]');
    await page.fill('[data-testid="ack-dialog"] textarea', 'a docs agent starts after lunch');
    await page.click('[data-testid="ack-confirm"]');
    await until(async () => (await page.textContent('[data-testid="view-inbox"]'))?.includes('Nothing needs you'), 'an empty inbox');
    await until(async () => (await page.locator('[data-testid="nav-badge-inbox"]').count()) === 0, 'no badge');
  });
});

describe('tasks from the keyboard', () => {
  it('g t, j, Enter opens the newest task in place; c cancels it through its dialog; Esc closes the pane', async () => {
    const task = (await apiCall<{ items: Array<{ id: number; title: string }> }>(g, 'GET', '/tasks?role=docs3')).items[0]!;
    for (const key of ['g', 't']) await page.keyboard.press(key);
    await page.waitForSelector(`[data-testid="tasks-table"] [data-row-key="${task.id}"]`);
    await page.keyboard.press('j');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-row-key'))).toBe(String(task.id));
    await page.keyboard.press('Enter');
    await page.waitForSelector('[data-testid="task-detail"]');
    // In place: still the Tasks view, the task in its address.
    expect(await page.evaluate(() => window.location.hash)).toBe(`#/tasks?task=${task.id}`);
    expect(await page.textContent('[data-testid="task-detail"]')).toContain('proofread the notes');
    expect(await page.getAttribute('[data-testid="action-cancel"]', 'title')).toContain('(key c)');
    await page.keyboard.press('c');
    await page.waitForSelector('[data-testid="dialog-cancel"]');
    await page.keyboard.type('nobody proofreads today');
    await page.keyboard.press('Enter');
    await until(async () => (await apiCall<{ task: { status: string } }>(g, 'GET', `/tasks/${task.id}`)).task.status === 'cancelled', 'the task cancelled');
    await page.waitForSelector('[data-testid="dialog-cancel"]', { state: 'detached' });
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="task-detail"]', { state: 'detached' });
    expect(await page.evaluate(() => window.location.hash)).toBe('#/tasks');
  });

  it('at 1024×700 a task opens in place in Tasks, and the role queue’s task pane leaves + New task in reach', async () => {
    const small = await openConsole(browser, g, { width: 1024, height: 700 });
    const task = (await apiCall<{ items: Array<{ id: number }> }>(g, 'GET', '/tasks?role=docs2')).items[0]!;
    await go(small.page, '#/tasks', `[data-row-key="${task.id}"]`);
    await small.page.click(`[data-testid="tasks-table"] [data-row-key="${task.id}"]`);
    await small.page.waitForSelector('[data-testid="task-detail"]');
    expect(await small.page.evaluate(() => window.location.hash)).toBe(`#/tasks?task=${task.id}`);
    await snap(small.page, '67-tasks-pane-1024');
    // Nothing clipped (axe, a slow scan on CI's 2 cores, found nothing here when this was written).
    const problems = await clippedActions(small.page);
    await go(small.page, `#/queues/docs2?task=${task.id}`, '[data-testid="task-detail"]');
    // The button is what a click at its centre reaches: the pane does not lie over it.
    const hit = await small.page.evaluate(() => {
      const r = document.querySelector('[data-testid="create-task"]')!.getBoundingClientRect();
      return document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2)?.getAttribute('data-testid');
    });
    expect(hit).toBe('create-task');
    await snap(small.page, '68-queue-pane-1024');
    expect(problems).toEqual([]);
    expect(small.errors).toEqual([]);
    await small.page.context().close();
    await go(page, '#/inbox', '[data-testid="inbox-tab-notifications"]');
  });
});

describe('notifications', () => {
  it('a webhook set up in the Notifications tab is stored masked, tested, and receives the next item', async () => {
    await page.click('[data-testid="inbox-tab-notifications"]');
    await page.waitForSelector('[data-testid="notifications-form"]');
    await page.click('[data-testid="webhook-add"]');
    await page.fill('[data-testid="webhook-url"]', receiverUrl);
    await page.click('[data-testid="notifications-save"]');
    // The new webhook's signing secret is shown this once, then the form shows it masked.
    await page.waitForSelector('[data-testid="secret-dialog"]');
    expect(await page.textContent('[data-testid="secret-dialog"]')).toMatch(/whsec_[A-Za-z0-9_-]{32}/);
    await page.click('[data-testid="secret-done"]');
    await until(async () => (await page.textContent('[data-testid="notifications-form"]'))?.includes('saved: http://127.0.0.1:'), 'the saved, masked URL');
    expect(await page.textContent('[data-testid="notifications-form"]')).not.toContain('gaffer-secret-token');
    await page.click('[data-testid="webhook-test"]');
    await until(async () => (await page.textContent('[data-testid="webhook-test-result"]'))?.startsWith('Delivered (HTTP 204'), 'the test result');
    expect(received[0]).toMatchObject({ path: '/hooks/gaffer-secret-token', body: { kind: 'test', subject: 'gaffer:test' } });
    await snap(page, '63-notifications-1440');
    expect(await layoutProblems(page, 'notifications 1440×900')).toEqual([]);

    // The next needs_human item is POSTed.
    const { job } = await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'payouts', role: 'ops', schedule: { everyS: 86400 }, retry: { maxAttempts: 1 } });
    await apiCall(g, 'POST', `/jobs/${job.id}/trigger`, { reason: 'e2e' });
    await until(() => received.some((r) => r.body.kind === 'needs_human'), 'the webhook POST');
    expect(received.find((r) => r.body.kind === 'needs_human')!.body).toMatchObject({ title: expect.stringContaining('payouts'), severity: 'critical' });
  });

  it('at 1024×700 the inbox and the notifications fit: nothing clipped, no serious axe finding', async () => {
    const small = await openConsole(browser, g, { width: 1024, height: 700 });
    await go(small.page, '#/inbox', '[data-testid="inbox-list"]');
    await snap(small.page, '64-inbox-1024');
    const problems = await layoutProblems(small.page, 'inbox 1024×700');
    await go(small.page, '#/inbox?tab=notifications', '[data-testid="notifications-form"]');
    await snap(small.page, '65-notifications-1024');
    problems.push(...(await layoutProblems(small.page, 'notifications 1024×700')));
    await go(small.page, '#/dashboard', '[data-testid="dashboard-inbox"]');
    await snap(small.page, '66-dashboard-inbox-1024');
    problems.push(...(await layoutProblems(small.page, 'dashboard 1024×700')));
    expect(problems).toEqual([]);
    expect(small.errors).toEqual([]);
    await small.page.context().close();
  });

  it('no console errors', () => {
    expect(errors).toEqual([]);
  });
});
