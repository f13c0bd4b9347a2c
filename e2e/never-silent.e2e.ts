/**
 * Never silent, in a real browser (Debian Chromium) at 1024×700 against a real headless Gaffer,
 * a real SDK agent and a signed webhook receiver on 127.0.0.1: a webhook is added in Inbox →
 * Notifications (its secret shown once, the console address set); a job run fails for good → the
 * inbox shows "Run failed" at once and the receiver gets a signed notification whose link opens
 * that item in the console (a tab without the token signs in first) → Retry now → the run
 * succeeds → the item shows as resolved itself; New secret signs what follows with the new one.
 * Screenshots at 1024×700 and 1440×900 (docs/screenshots when GAFFER_DOCS_SCREENSHOTS=1).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryableError, type Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, ROOT, snap as snapPicture, startAgent, startGaffer, until, type Gaffer } from './harness';
import { axeFindings, clippedActions } from './layout-check';

interface Received {
  raw: string;
  body: { id: number; kind: string; title: string; url: string };
  signature: string;
  delivery: string;
}

let g: Gaffer;
let browser: Browser;
let page: Page;
let wide: Page;
let errors: string[];
let agent: Agent;
let receiver: http.Server;
let receiverUrl = '';
const received: Received[] = [];
/** The nightly QA fails until the test fixes it; the weekly export always fails. */
let qaBroken = true;
let secret = '';
let qaJob = '';
let itemId = 0;

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      received.push({ raw, body: JSON.parse(raw), signature: String(req.headers['gaffer-signature'] ?? ''), delivery: String(req.headers['gaffer-delivery'] ?? '') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/qa-team-token`;
  g = await startGaffer();
  agent = await startAgent(g, await createAgentToken(g, 'qa agent', 'qa'), 'qa', 'qa-1');
  agent.onJob((ctx) => {
    if (ctx.job === 'weekly-export') throw new RetryableError('export API answered 503 Service Unavailable');
    if (qaBroken) throw new RetryableError('3 of 120 tests failed: test_login, test_cart, test_checkout');
    return { passed: 120 };
  });
  browser = await launchBrowser();
  ({ page, errors } = await openConsole(browser, g, { width: 1024, height: 700 }));
  ({ page: wide } = await openConsole(browser, g, { width: 1440, height: 900 }));
}, 180_000);

afterAll(async () => {
  await agent?.close({ timeoutMs: 500 }).catch(() => {});
  await browser?.close();
  await g?.stop();
  receiver?.closeAllConnections();
  await new Promise((r) => receiver?.close(r));
});

/** The five-line Node verifier of docs/protocol.md, as a receiver would run it. */
function verified(key: string, header: string, rawBody: string, maxAgeS = 300): boolean {
  const p = Object.fromEntries(header.split(',').map((kv) => kv.split('=')));
  const want = Buffer.from(createHmac('sha256', key).update(`${p.t}.`).update(rawBody).digest('hex'));
  return want.length === p.v1.length && timingSafeEqual(want, Buffer.from(p.v1)) && Math.abs(Date.now() / 1000 - Number(p.t)) <= maxAgeS;
}

/** A screenshot without toasts or the pointer on top; also into docs/screenshots when asked. */
async function snap(p: Page, name: string, docsName?: string): Promise<void> {
  const file = await snapPicture(p, name);
  if (docsName && process.env.GAFFER_DOCS_SCREENSHOTS === '1') fs.copyFileSync(file, path.join(ROOT, 'docs', 'screenshots', `${docsName}.png`));
}

async function layoutProblems(p: Page, where: string): Promise<string[]> {
  const out: string[] = [];
  for (const f of await axeFindings(p)) out.push(`${where}: axe ${f.impact} ${f.id} (${f.help}): ${f.nodes.join(' | ')}`);
  for (const c of await clippedActions(p)) out.push(`${where}: ${c}`);
  return out;
}

async function createFailingJob(name: string): Promise<string> {
  const { job } = await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name, role: 'qa', schedule: { everyS: 86400 }, retry: { maxAttempts: 2, firstDelayS: 1 } });
  await apiCall(g, 'POST', `/jobs/${job.id}/trigger`, { reason: 'e2e' });
  return job.id;
}

describe('never silent at 1024×700', () => {
  it('a webhook added in Notifications shows its signing secret once; the console address is saved', async () => {
    await go(page, '#/inbox?tab=notifications', '[data-testid="notifications-form"]');
    await page.click('[data-testid="webhook-add"]');
    // A new webhook sends every critical and warning kind: "Run failed" is ticked already.
    expect(await page.locator('[data-testid="webhook-new"] label', { hasText: 'Run failed' }).locator('input').isChecked()).toBe(true);
    await page.fill('[data-testid="webhook-new"] input[placeholder="e.g. phone"]', 'qa-team receiver');
    await page.fill('[data-testid="webhook-url"]', receiverUrl);
    await page.fill('[data-testid="console-url"]', g.url);
    await page.click('[data-testid="notifications-save"]');
    await page.waitForSelector('[data-testid="secret-dialog"]');
    secret = (await page.textContent('[data-testid="secret-value"]'))!.trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{32}$/);
    expect(await page.textContent('[data-testid="secret-dialog"]')).toContain('only this once');
    await snap(page, '70-webhook-secret-1024');
    await page.click('[data-testid="secret-done"]');
    // From now on the secret is masked: only its last four characters are shown.
    await until(async () => (await page.textContent('[data-testid="webhook-secret"]'))?.includes(`whsec_…${secret.slice(-4)}`), 'the masked secret');
    expect(await page.textContent('[data-testid="notifications-form"]')).not.toContain(secret);
    expect(await page.inputValue('[data-testid="console-url"]')).toBe(g.url);
  });

  it('a job run that fails for good is in the inbox at once as "Run failed", with the agent’s words and Retry now', async () => {
    qaJob = await createFailingJob('nightly-qa');
    const item = await until(async () => (await apiCall<{ items: Array<{ id: number; kind: string; subject: string }> }>(g, 'GET', '/inbox?kind=run_failed')).items.find((i) => i.subject === `job:${qaJob}`), 'the run_failed item', 30_000);
    itemId = item!.id;
    await go(page, '#/inbox', '[data-testid="inbox-list"]');
    const row = page.locator(`[data-testid="inbox-item-${itemId}"]`);
    await row.waitFor();
    const text = await row.textContent();
    expect(text).toContain('Run failed');
    expect(text).toContain('nightly-qa');
    expect(text).toContain('3 of 120 tests failed: test_login, test_cart, test_checkout');
    expect(await row.locator('[data-testid="inbox-retry"]').textContent()).toBe('Retry now');
    expect(await row.textContent()).toContain('Open the slot ledger');
    // The rail's badge counts it.
    await until(async () => (await page.textContent('[data-testid="nav-badge-inbox"]')) === '1', 'the rail badge');
    await snap(page, '73-inbox-failed-run-1024', 'inbox-failed-run-1024');
    await wide.bringToFront();
    await go(wide, '#/inbox', `[data-testid="inbox-item-${itemId}"]`);
    // The evidence in words: the slot, what the agent said, the attempts.
    await wide.click(`[data-testid="inbox-item-${itemId}"] details summary`);
    const evidence = (await wide.textContent(`[data-testid="inbox-item-${itemId}"] details`))!;
    expect(evidence).toContain('Agent said');
    expect(evidence).toContain('Attempts');
    expect(evidence).not.toMatch(/run_[A-Za-z0-9]/);
    await snap(wide, '74-inbox-failed-run-1440', 'inbox-failed-run');
    await page.bringToFront();
    expect([...(await layoutProblems(page, 'inbox 1024×700')), ...(await layoutProblems(wide, 'inbox 1440×900'))]).toEqual([]);
  });

  it('the webhook gets a signed notification whose link opens that item in the console', async () => {
    const note = (await until(() => received.find((r) => r.body.kind === 'run_failed'), 'the run_failed notification', 30_000))!;
    expect(verified(secret, note.signature, note.raw)).toBe(true);
    expect(verified('whsec_not-the-secret', note.signature, note.raw)).toBe(false);
    expect(note.delivery).toMatch(/^\d+$/);
    expect(note.body).toMatchObject({ id: itemId, title: expect.stringContaining('nightly-qa'), url: `${g.url}/#/inbox?item=${itemId}` });
    // What a tap on the phone's notification does: the console loads on that item (this tab keeps its sign-in).
    await page.goto('about:blank');
    await page.goto(note.body.url);
    const focused = page.locator('[data-testid="inbox-focused-item"]');
    await focused.waitFor();
    expect(await focused.textContent()).toContain('Run failed');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('inbox-focused-item');
    // Shown once: on top, not again in the list below.
    expect(await page.locator(`[data-testid="inbox-item-${itemId}"]`).count()).toBe(0);
    // A phone's browser has no token in its tab yet: it asks for it, then shows the item.
    const fresh = await (await browser.newContext({ viewport: { width: 1024, height: 700 }, colorScheme: 'dark' })).newPage();
    await fresh.goto(note.body.url);
    await fresh.waitForSelector('[data-testid="sign-in"]');
    await fresh.fill('input[name="operator-token"]', g.token);
    await fresh.click('[data-testid="sign-in-submit"]');
    await until(async () => (await fresh.textContent('[data-testid="inbox-focused-item"]').catch(() => ''))?.includes('Run failed'), 'the item after signing in');
    await fresh.context().close();
  });

  it('Retry now runs it again; the toast links to the run; once it succeeds the item resolved itself', async () => {
    // A second job that stays failed: the open list keeps a "Run failed" under the resolved item.
    await createFailingJob('weekly-export');
    await until(async () => (await apiCall<{ items: unknown[] }>(g, 'GET', '/inbox?kind=run_failed')).items.length === 2, 'the second run_failed item', 30_000);
    qaBroken = false;
    await page.click('[data-testid="inbox-focused-item"] [data-testid="inbox-retry"]');
    await until(async () => (await page.textContent('.toasts'))?.includes('Retrying nightly-qa'), 'the retry toast');
    expect(await page.textContent('[data-testid="toast-link"]')).toBe('Open the run');
    const focused = page.locator('[data-testid="inbox-focused-item"]');
    await until(async () => (await focused.textContent())?.includes('Resolved itself'), 'the item resolved', 30_000);
    const text = (await focused.textContent())!;
    expect(text).toMatch(/Resolved itself (just now|.* ago): nightly-qa: .* was backfilled/);
    // Resolved: nothing to acknowledge or snooze any more, nor to retry.
    expect(await focused.locator('[data-testid="inbox-ack"], [data-testid="inbox-snooze"], [data-testid="inbox-retry"]').count()).toBe(0);
    await until(async () => (await page.locator('[data-testid^="inbox-item-"]', { hasText: 'weekly-export' }).count()) === 1, 'the open weekly-export item below');
    await snap(page, '75-inbox-resolved-1024', 'inbox-resolved-1024');
    await wide.bringToFront();
    await wide.goto(`${g.url}/#/inbox?item=${itemId}`);
    await until(async () => (await wide.textContent('[data-testid="inbox-focused-item"]'))?.includes('Resolved itself'), 'the resolved item at 1440');
    await wide.locator('[data-testid^="inbox-item-"]', { hasText: 'weekly-export' }).waitFor();
    // The list and its counts follow too: only the weekly export is open.
    await until(async () => (await wide.textContent('[data-testid="inbox-state-open"]'))?.trim() === 'Open1', 'the open count at 1440');
    await until(async () => (await wide.textContent('[data-testid="nav-badge-inbox"]')) === '1', 'the rail badge at 1440');
    await snap(wide, '76-inbox-resolved-1440', 'inbox-resolved');
    await page.bringToFront();
    expect([...(await layoutProblems(page, 'resolved 1024×700')), ...(await layoutProblems(wide, 'resolved 1440×900'))]).toEqual([]);
  });

  it('the Resolved tab lists it; the run reads as failed, then ran again and succeeded', async () => {
    await page.click('[data-testid="inbox-focus-close"]');
    await page.click('[data-testid="inbox-state-resolved"]');
    const row = page.locator(`[data-testid="inbox-item-${itemId}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('Resolved itself');
    await row.locator('button', { hasText: 'Open the slot ledger' }).click();
    await page.waitForSelector('[data-testid="slot-detail"]');
    await until(async () => (await page.textContent('[data-testid="slot-settled"]'))?.includes('failed, then ran again and succeeded'), 'the run’s words');
    // Nothing to retry on a run that succeeded.
    expect(await page.locator('[data-testid="slot-retry"]').count()).toBe(0);
    // The run that is still failed has Retry now in its pane, beside Queue for backfill.
    await go(page, '#/inbox', '[data-testid="inbox-state-open"]');
    await page.click('[data-testid="inbox-state-open"]');
    await page.locator('[data-testid^="inbox-item-"]', { hasText: 'weekly-export' }).locator('button', { hasText: 'Open the slot ledger' }).click();
    await page.waitForSelector('[data-testid="slot-detail"] [data-testid="slot-retry"]');
    expect(await page.locator('[data-testid="slot-detail"] .actions-row').textContent()).toMatch(/Retry now.*Queue for backfill/);
    await snap(page, '78-run-pane-retry-1024');
  });

  it('New secret: confirmed first, the new secret shown once, deliveries signed with it; deliveries read by item title', async () => {
    await go(page, '#/inbox?tab=notifications', '[data-testid="webhook-rotate"]');
    await page.click('[data-testid="webhook-rotate"]');
    await page.waitForSelector('[data-testid="rotate-dialog"]');
    await page.click('[data-testid="rotate-confirm"]');
    await page.waitForSelector('[data-testid="secret-dialog"]');
    const fresh = (await page.textContent('[data-testid="secret-value"]'))!.trim();
    expect(fresh).toMatch(/^whsec_/);
    expect(fresh).not.toBe(secret);
    await page.click('[data-testid="secret-done"]');
    await until(async () => (await page.textContent('[data-testid="webhook-secret"]'))?.includes(`whsec_…${fresh.slice(-4)}`), 'the new masked secret');
    const before = received.length;
    await page.click('[data-testid="webhook-test"]');
    const test = (await until(() => received.slice(before).find((r) => r.body.kind === 'test'), 'the test notice'))!;
    expect(verified(fresh, test.signature, test.raw)).toBe(true);
    expect(verified(secret, test.signature, test.raw)).toBe(false);
    // The deliveries name what was sent and where, not ids.
    await until(async () => (await page.textContent('[data-testid="deliveries"]'))?.includes('nightly-qa'), 'the deliveries by title');
    const deliveries = (await page.textContent('[data-testid="deliveries"]'))!;
    expect(deliveries).toContain('to qa-team receiver');
    expect(deliveries).not.toMatch(/wh_[A-Za-z0-9]/);
    for (const p of [page, wide]) {
      if (p === wide) {
        await wide.bringToFront();
        await go(wide, '#/inbox?tab=notifications', '[data-testid="webhook-secret"]');
      }
      for (const b of await p.$$('.toasts [aria-label="Dismiss"]')) await b.click().catch(() => {});
      await p.evaluate(() => document.querySelector('[data-testid="view-inbox"]')?.scrollIntoView({ block: 'start' }));
    }
    const problems = [...(await layoutProblems(page, 'notifications 1024×700')), ...(await layoutProblems(wide, 'notifications 1440×900'))];
    await snap(page, '71-notifications-1024', 'notifications-1024');
    await snap(wide, '72-notifications-1440', 'notifications');
    await page.bringToFront();
    expect(problems).toEqual([]);
  });

  it('a crash-looping managed agent is called out on the dashboard, linking to it; its item is in the inbox', async () => {
    await apiCall(g, 'POST', '/managed-agents', { name: 'flaky-bot', role: 'qa', mode: 'long_running', command: ['sh', '-c', 'echo "config.toml: no such file" >&2; exit 1'], reason: 'e2e' });
    // Five quick exits in a row (backoff 1, 2, 4, 8 s) make a crash loop.
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    const callout = page.locator('[data-testid="crash-loop-callout"]');
    await callout.waitFor({ timeout: 60_000 });
    expect(await callout.textContent()).toMatch(/Agent flaky-bot is crash looping — it keeps exiting right after it starts \(last exit: exit 1 after/);
    await until(async () => (await page.textContent('[data-testid="dashboard-inbox"]'))?.includes('agent crash looping'), 'the inbox strip counting it');
    expect(await layoutProblems(page, 'dashboard 1024×700')).toEqual([]);
    await snap(page, '77-dashboard-crash-loop-1024', 'dashboard-crash-loop-1024');
    await callout.locator('button', { hasText: 'Open the agent' }).click();
    await until(async () => (await page.evaluate(() => window.location.hash)) === '#/managed/flaky-bot', 'the agent’s page');
  });

  it('no console errors', () => {
    expect(errors).toEqual([]);
  });
});
