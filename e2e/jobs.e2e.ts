/**
 * The jobs views against a real headless Gaffer, a real SDK agent (`agent.onJob`) and Chromium:
 * the job editor (validation at the field, live preview, save → version bump), the editor's
 * trustworthiness (its counts equal its list, the UI's words, a job saved with a warning can be
 * edited, leaving unsaved work asks first; at 1024×700 and 1440×900), the Rehearse tab (five
 * timelines with their verdicts, following edits, offered before a new job is created), trigger now → the agent
 * receives the job_trigger → the ledger shows the run, the backfill queue, a pause that
 * "Why didn't it run?" explains, and a calendar with an imported .ics file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FatalError, type Agent } from '../src-main/sdk';
import { apiCall, createAgentToken, go, launchBrowser, openConsole, snap, startAgent, startGaffer, until, type Gaffer } from './harness';
import { axeFindings, clippedActions } from './layout-check';

let g: Gaffer;
let browser: Browser;
let page: Page;
let errors: string[];
let agent: Agent;
let jobId = '';
const received: Array<{ job: string; slot: string; attempt: number; version: number; idempotencyKey: string }> = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-e2e-jobs-'));

beforeAll(async () => {
  g = await startGaffer();
  const token = await createAgentToken(g, 'reporter agent', 'reporter');
  agent = await startAgent(g, token, 'reporter', 'reporter-1');
  agent.onJob(async (ctx) => {
    received.push({ job: ctx.job, slot: ctx.slot, attempt: ctx.attempt, version: ctx.version, idempotencyKey: ctx.idempotencyKey });
    await ctx.step('fetch', () => ({ rows: 42 }));
    if (ctx.job === 'fragile-export') throw new FatalError('validation failed: the export is empty');
    await ctx.step('publish', () => 'msg-1', { ref: 'msg-1' });
    return { rows: 42 };
  });
  browser = await launchBrowser();
  ({ page, errors } = await openConsole(browser, g));
}, 180_000);

afterAll(async () => {
  await agent?.close({ timeoutMs: 500 }).catch(() => {});
  await browser?.close();
  await g?.stop();
});

/** Text of the issues shown at one field of the editor. */
async function fieldIssues(field: string): Promise<string> {
  const loc = page.locator(`[data-field="${field}"] [data-testid="field-issue"]`);
  return (await loc.allTextContents()).join(' | ');
}

async function pickZone(name: string, zone: string): Promise<void> {
  const input = page.locator(`input[name="${name}"]`);
  await input.click();
  await input.fill(zone.split('/')[1]!.replace('_', ' '));
  await page.locator('[data-testid="zone-options"] [role="option"]', { hasText: zone.replace('_', ' ') }).first().click();
  expect(await input.inputValue()).toBe(zone);
}

/**
 * The Rehearse tab of the new daily-report job (09:00–10:00 Shanghai, run now within 30 min, no
 * precondition):
 * five timelines, each ending in its verdict, the surprise highlighted; it follows an edit; axe
 * clean; screenshots at 1440×900 and 1024×700. Nothing live was written meanwhile.
 */
async function rehearseTab(): Promise<void> {
  const auditBefore = (await apiCall<{ items: unknown[] }>(g, 'GET', '/audit?limit=1000')).items.length;
  await page.waitForSelector('[data-testid="rehearse-panel"] [data-testid="rehearse-cross_day_backfill"] [data-testid="rehearse-verdict"]');
  const names = await page.$$eval('[data-testid="rehearse-panel"] article', (els) => els.map((e) => e.getAttribute('data-testid')));
  expect(names).toEqual(['rehearse-normal', 'rehearse-data_delay', 'rehearse-downstream_timeout', 'rehearse-process_restart', 'rehearse-cross_day_backfill']);
  expect(await page.textContent('[data-testid="rehearse-normal"] [data-testid="rehearse-verdict"]')).toContain('ran once');
  // The job has no precondition: late data is not waited for, and the rehearsal says so.
  expect(await page.textContent('[data-testid="rehearse-data_delay"] [data-testid="rehearse-verdict"]')).toContain('ran on time — on data that was not there yet');
  expect(await page.textContent('[data-testid="rehearse-data_delay"] [data-testid="rehearse-surprise"]')).toContain('the job has no precondition');
  const verdictOf = async (name: string) => (await page.textContent(`[data-testid="rehearse-${name}"] [data-testid="rehearse-verdict"]`)) ?? '';
  const downtime = await verdictOf('cross_day_backfill');
  const count = (await page.textContent('[data-testid="tab-rehearse"] .tab-count')) ?? '';
  expect(count).toMatch(/^(\d+ end badly|all end well)$/);
  expect(await page.locator('[data-testid="rehearse-panel"] [data-surprise="true"]').count()).toBeGreaterThan(0);
  const findings = await axeFindings(page);
  expect(findings, JSON.stringify(findings)).toEqual([]);
  expect(await clippedActions(page)).toEqual([]);
  await snap(page, '47-job-editor-rehearse-1440');
  await page.setViewportSize({ width: 1024, height: 700 });
  expect(await clippedActions(page)).toEqual([]);
  await snap(page, '48-job-editor-rehearse-1024');
  await page.setViewportSize({ width: 1440, height: 900 });
  // It follows an edit: with "Fold into the next run" the slot missed while Gaffer was down is covered the next day.
  await page.click('[data-testid="tab-settings"]');
  await page.selectOption('select[name="missedWindow"]', 'fold_into_next');
  await page.fill('input[name="toleranceS"]', ''); // a tolerance is for "run now" only
  await page.click('[data-testid="tab-rehearse"]');
  await until(async () => (await verdictOf('cross_day_backfill')).includes('folded into the run of'), 'the rehearsal to follow the edit');
  await page.click('[data-testid="tab-settings"]');
  await page.selectOption('select[name="missedWindow"]', 'run_now');
  await page.fill('input[name="toleranceS"]', '1800');
  // Behind the settings tab the rehearsal follows too: the tab's count comes back for these settings.
  await until(async () => (await page.textContent('[data-testid="tab-rehearse"]')) === `Rehearse${count}`, 'the tab’s count for the settings as they stand');
  await page.click('[data-testid="tab-rehearse"]');
  await until(async () => (await verdictOf('cross_day_backfill')) === downtime, 'the rehearsal of the settings as they stand');
  expect((await apiCall<{ items: unknown[] }>(g, 'GET', '/audit?limit=1000')).items.length).toBe(auditBefore);
  expect((await apiCall<{ items: unknown[] }>(g, 'GET', '/jobs')).items).toHaveLength(0);
}

async function reasonDialog(testId: string, reason: string): Promise<void> {
  await page.waitForSelector(`[data-testid="${testId}"]`);
  await page.fill(`[data-testid="${testId}"] textarea[name="reason"]`, reason);
  await page.click(`[data-testid="${testId}"] button[type="submit"]`);
  await page.waitForSelector(`[data-testid="${testId}"]`, { state: 'detached' });
}

describe('job editor', () => {
  it('the jobs list starts empty and says what to do', async () => {
    await go(page, '#/jobs', '[data-testid="view-jobs"]');
    expect(await page.textContent('[data-testid="view-jobs"]')).toContain('No jobs yet');
  });

  it('creates a job: a contradictory setting is shown at the field first, then fixed; the preview follows', async () => {
    await page.click('[data-testid="new-job"]');
    await page.waitForSelector('[data-testid="view-job-editor"]');
    await page.fill('input[name="name"]', 'daily-report');
    await page.fill('input[name="role"]', 'reporter');
    await page.fill('input[name="cron"]', '0 9 * * *');
    await pickZone('timezone', 'Asia/Shanghai');
    await page.check('input[name="windowOn"]');
    // Contradiction: "run now" without a tolerance.
    await page.selectOption('select[name="missedWindow"]', 'run_now');
    await until(async () => (await fieldIssues('toleranceS')).includes('“Run now (within a tolerance)” needs a tolerance'), 'the tolerance message at its field');
    expect(await page.textContent('[data-testid="issue-summary"]')).toContain('Missed window · Tolerance (s): “Run now (within a tolerance)” needs a tolerance');
    // Saving is refused before anything is sent: still no job.
    await page.click('[data-testid="save-job"]');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('toleranceS');
    expect((await apiCall<{ items: unknown[] }>(g, 'GET', '/jobs')).items).toHaveLength(0);
    await page.waitForSelector('[data-testid="preview-item"]');
    await snap(page, '30-job-editor-validation');

    await page.fill('input[name="toleranceS"]', '1800');
    await until(async () => (await fieldIssues('toleranceS')) === '', 'the tolerance message to go');
    // The policy is explained in words next to it, with this job's own window.
    expect(await page.textContent('[data-testid="section-missed"] [data-testid="policy-sentence"]')).toContain('09:00–10:00 window (Asia/Shanghai)');
    await until(async () => (await page.getAttribute('[data-testid="preview-item"] >> nth=0', 'data-local'))?.endsWith('T09:00') ?? false, 'a preview at 09:00 Shanghai time');
    expect(await page.locator('[data-testid="preview-item"]').count()).toBe(10);
    await snap(page, '31-job-editor-preview');

    await page.fill('[data-testid="save-reason"]', 'morning numbers for the team');
    await page.click('[data-testid="save-job"]');
    // A new job that was not rehearsed as it stands: creating it offers a rehearsal first.
    await page.waitForSelector('[data-testid="rehearse-offer"]');
    expect((await apiCall<{ items: unknown[] }>(g, 'GET', '/jobs')).items).toHaveLength(0);
    await page.click('[data-testid="rehearse-offer-go"]');
    await rehearseTab();
    await page.click('[data-testid="rehearse-create"]');
    await page.waitForSelector('[data-testid="job-version"]');
    expect(await page.textContent('[data-testid="job-version"]')).toBe('version 1');
    const jobs = await apiCall<{ items: Array<{ id: string; name: string; toleranceS: number; missedWindow: string; window: { start: string } }> }>(g, 'GET', '/jobs');
    expect(jobs.items).toHaveLength(1);
    expect(jobs.items[0]).toMatchObject({ name: 'daily-report', missedWindow: 'run_now', toleranceS: 1800, window: { start: '09:00' } });
    jobId = jobs.items[0]!.id;
  });

  it('editing the schedule shows the new preview (and the server’s window check); Ctrl+S saves version 2', async () => {
    await page.fill('input[name="cron"]', '30 8 * * 1-5');
    // The server's schedule check: 08:30 is outside the 09:00–10:00 window.
    await until(async () => (await fieldIssues('window')).includes('outside the window'), 'the server’s window-vs-cron message');
    await snap(page, '32-job-editor-server-check');
    await page.fill('input[name="windowStart"]', '08:00');
    await until(async () => (await fieldIssues('window')) === '', 'the window message to go');
    await until(async () => {
      const locals = await page.$$eval('[data-testid="preview-item"]', (els) => els.map((e) => e.getAttribute('data-local') ?? ''));
      return locals.length === 10 && locals.every((l) => l.endsWith('T08:30'));
    }, 'the preview at 08:30');
    const locals = await page.$$eval('[data-testid="preview-item"]', (els) => els.map((e) => e.getAttribute('data-local') ?? ''));
    // Monday to Friday only.
    for (const l of locals) expect([1, 2, 3, 4, 5]).toContain(new Date(`${l.slice(0, 10)}T00:00:00Z`).getUTCDay());
    expect(await page.textContent('[data-testid="section-schedule"] [data-testid="policy-sentence"]')).toContain('Monday to Friday at 08:30');
    await page.fill('[data-testid="save-reason"]', 'earlier, weekdays only');
    await page.locator('input[name="cron"]').focus();
    await page.keyboard.press('Control+s');
    await until(async () => (await page.textContent('[data-testid="job-version"]')) === 'version 2', 'version 2');
    await page.waitForSelector('[data-testid="saved-note"]');
    await snap(page, '33-job-editor-saved-v2');
    // Esc goes back to the list.
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="jobs-table"]');
  });
});

describe('runs', () => {
  it('trigger now → the agent receives the job_trigger → the run shows as success in the ledger', async () => {
    await go(page, '#/jobs', '[data-testid="jobs-table"]');
    await page.click('[data-testid="trigger-daily-report"]');
    await reasonDialog('dialog-job-trigger', 'e2e: numbers needed now');
    await until(() => received.some((r) => r.job === 'daily-report'), 'the agent to receive the job_trigger', 20_000);
    const t = received.find((r) => r.job === 'daily-report')!;
    expect(t).toMatchObject({ attempt: 1, version: 2 });
    expect(t.idempotencyKey).toBe(`daily-report:${t.slot}`);
    await until(async () => ((await page.textContent('[data-testid="job-state-daily-report"]')) ?? '').includes('Active'), 'the list');
    await until(async () => ((await page.textContent('[data-testid="jobs-table"]')) ?? '').includes('ran ok'), 'last outcome ran ok in the list', 20_000);
    await snap(page, '34-jobs-list');

    await go(page, `#/runs/${jobId}`, '[data-testid="view-runs"]');
    const row = page.locator(`[data-testid="ledger-table"] [data-row-key="${t.slot}"]`);
    await row.waitFor({ timeout: 20_000 });
    await until(async () => ((await row.textContent()) ?? '').includes('ran ok'), 'the slot as ran ok', 20_000);
    expect(await row.textContent()).toContain('v2');
    expect(await page.getAttribute(`[data-testid="heatmap"] [data-day="${t.slot.slice(0, 10)}"]`, 'data-heat')).toBe('ok');
    await row.click();
    await page.waitForSelector('[data-testid="run-steps"]');
    const detail = await page.textContent('[data-testid="slot-detail"]');
    expect(detail).toContain('fetch');
    expect(detail).toContain('publish');
    expect(detail).toContain('Trace id');
    await snap(page, '35-runs-ledger');
  });

  it('a fatal failure lands in the backfill queue; it is cancelled with a reason', async () => {
    const { job } = await apiCall<{ job: { id: string } }>(g, 'POST', '/jobs', { name: 'fragile-export', role: 'reporter', schedule: { cron: '0 3 * * *', timezone: 'Europe/Berlin' }, description: 'nightly export' });
    await apiCall(g, 'POST', `/jobs/${job.id}/trigger`, { reason: 'e2e: try the export' });
    await until(() => received.some((r) => r.job === 'fragile-export'), 'the export trigger', 20_000);
    await go(page, `#/runs/${job.id}`, '[data-testid="backfill-queue"]');
    const item = page.locator('[data-testid="backfill-queue"] [data-testid^="backfill-"]', { hasText: 'fragile-export' }).first();
    await item.waitFor({ timeout: 20_000 });
    expect(await item.textContent()).toMatch(/held|failed/);
    await until(async () => ((await page.textContent('[data-testid="ledger-table"]')) ?? '').includes('held'), 'the held run in the ledger', 20_000);
    await snap(page, '36-backfill-queue');
    // The dashboard's "runs needing attention" and "next triggers" are real data from core.jobs.
    await go(page, '#/dashboard', '[data-testid="view-dashboard"]');
    await until(async () => Number((await page.textContent('[data-testid="stat-runs"] .stat-value'))?.trim()) >= 1, 'runs needing attention on the dashboard');
    await until(async () => ((await page.textContent('[data-testid="view-dashboard"]')) ?? '').includes('fragile-export'), 'the next triggers');
    expect(await page.textContent('[data-testid="view-dashboard"]')).toContain('daily-report');
    await snap(page, '41-dashboard-jobs');
    await page.click('[data-testid="stat-runs"]');
    await page.waitForSelector('[data-testid="view-runs"]');
    await go(page, `#/runs/${job.id}`, '[data-testid="backfill-queue"] [data-testid^="backfill-"]');
    await item.locator('button', { hasText: 'Cancel' }).click();
    await reasonDialog('dialog-backfill-cancel', 'e2e: export not needed this time');
    await until(async () => (await page.locator('[data-testid="backfill-queue"] [data-testid^="backfill-"]', { hasText: 'fragile-export' }).count()) === 0, 'the backfill to leave the queue');
  });
});

describe('why didn’t it run?', () => {
  it('a paused job: the Why view for the next slot says paused, by whom and why (a forecast)', async () => {
    await go(page, '#/jobs', '[data-testid="jobs-table"]');
    await page.click('[data-testid="pause-daily-report"]');
    await reasonDialog('dialog-job-pause', 'e2e: upstream migration until Friday');
    await until(async () => ((await page.textContent('[data-testid="job-state-daily-report"]')) ?? '').includes('upstream migration'), 'the pause reason in the list');
    expect(await page.textContent('[data-testid="job-state-daily-report"]')).toContain('operator:browser');

    await go(page, `#/why/${jobId}`, '[data-testid="why-verdict"]');
    await page.click('[data-testid="why-pick-next"]');
    await until(async () => ((await page.textContent('[data-testid="why-outcome"]')) ?? '').includes('paused by operator:browser'), 'the forecast to say paused');
    const verdict = await page.textContent('[data-testid="why-verdict"]');
    expect(verdict).toContain('FORECAST');
    expect(verdict).toContain('e2e: upstream migration until Friday');
    expect(await page.getAttribute('[data-testid="layer-execution"]', 'data-verdict')).toBe('not_ready');
    expect(await page.textContent('[data-testid="layer-item-pause"]')).toContain('paused now (by operator:browser');
    expect(await page.getAttribute('[data-testid="layer-time"]', 'data-verdict')).toBe('ready');
    await snap(page, '37-why-paused');
  });

  it('from a slot in the ledger to its explanation: recorded facts, ran and not "not ready"', async () => {
    const t = received.find((r) => r.job === 'daily-report')!;
    await go(page, `#/runs/${jobId}`, `[data-testid="why-${t.slot}"]`);
    await page.click(`[data-testid="why-${t.slot}"]`);
    await page.waitForSelector('[data-testid="why-verdict"][data-kind="ran_ok"]');
    const v = await page.textContent('[data-testid="why-verdict"]');
    expect(v).toContain('RECORDED FACTS');
    expect(v).toContain('Ran successfully');
    expect(await page.textContent('[data-testid="why-run"]')).toContain('fetch → publish');
    await snap(page, '38-why-ran');
  });
});

describe('calendars', () => {
  it('a calendar with validation at the field and an imported .ics file', async () => {
    await go(page, '#/calendars', '[data-testid="view-calendars"]');
    await page.click('[data-testid="new-calendar"]');
    await page.waitForSelector('[data-testid="calendar-editor"]');
    await page.fill('input[name="cal-id"]', 'cn-2026');
    await page.fill('input[name="cal-name"]', 'China 2026');
    await pickZone('cal-timezone', 'Asia/Shanghai');
    await page.fill('textarea[name="cal-holidays"]', '2026-01-01\n2026-13-01');
    await until(async () => (await page.locator('[data-field="holidays"] [data-testid="field-issue"]').allTextContents()).join(' ').includes('2026-13-01'), 'the bad date at its field');
    await snap(page, '39-calendar-validation');
    await page.fill('textarea[name="cal-holidays"]', '2026-01-01');
    await page.click('[data-testid="save-calendar"]');
    await page.waitForSelector('[data-testid="ics-import"]');

    const ics = [
      'BEGIN:VCALENDAR',
      'VERSION:2.0',
      'PRODID:-//gaffer e2e//EN',
      'X-WR-TIMEZONE:Asia/Shanghai',
      'BEGIN:VEVENT',
      'UID:national-day@e2e',
      'DTSTART;VALUE=DATE:20261001',
      'DTEND;VALUE=DATE:20261008',
      'SUMMARY:National Day',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:makeup-1@e2e',
      'DTSTART;VALUE=DATE:20261010',
      'DTEND;VALUE=DATE:20261011',
      'SUMMARY:补班 (make-up workday)',
      'END:VEVENT',
      'BEGIN:VEVENT',
      'UID:outing@e2e',
      'DTSTART;VALUE=DATE:20261012',
      'SUMMARY:Company outing',
      'STATUS:CANCELLED',
      'END:VEVENT',
      'END:VCALENDAR',
    ].join('\r\n');
    const file = path.join(tmp, 'holidays-2026.ics');
    fs.writeFileSync(file, ics);
    await page.setInputFiles('[data-testid="ics-file"]', file);
    await page.fill('input[name="ics-reason"]', 'e2e: official 2026 holidays');
    await page.click('[data-testid="ics-import-button"]');
    await page.waitForSelector('[data-testid="ics-result"]');
    const result = await page.textContent('[data-testid="ics-result"]');
    expect(result).toContain('+7 holidays');
    expect(result).toContain('+1 make-up workday');
    expect(await page.textContent('[data-testid="ics-warnings"]')).toContain('cancelled');
    await snap(page, '40-calendar-ics-import');
    const { calendar: cal } = await apiCall<{ calendar: { holidays: string[]; extraWorkdays: string[] } }>(g, 'GET', '/calendars/cn-2026');
    expect(cal.holidays).toHaveLength(8);
    expect(cal.extraWorkdays).toEqual(['2026-10-10']);
  });

  it('the job editor’s preview follows the calendar: a holiday’s slot shows as skipped, with why', async () => {
    // A weekday at least two days ahead (Shanghai dates), made a holiday.
    const fmt = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Shanghai', year: 'numeric', month: '2-digit', day: '2-digit', weekday: 'short' });
    let holiday = '';
    for (let d = 2; !holiday; d++) {
      const parts = Object.fromEntries(fmt.formatToParts(new Date(Date.now() + d * 86_400_000)).map((p) => [p.type, p.value]));
      if (parts.weekday !== 'Sat' && parts.weekday !== 'Sun') holiday = `${parts.year}-${parts.month}-${parts.day}`;
    }
    const text = await page.inputValue('textarea[name="cal-holidays"]');
    await page.fill('textarea[name="cal-holidays"]', `${text}\n${holiday}`);
    await page.fill('input[name="cal-reason"]', 'e2e: office closed');
    await page.click('[data-testid="save-calendar"]');
    await until(async () => ((await page.textContent('[data-testid="calendar-cn-2026"]')) ?? '').includes('9 holidays'), 'the saved holiday');

    await go(page, `#/jobs/${jobId}`, '[data-testid="preview-item"]');
    await page.selectOption('select[name="calendar"]', 'cn-2026');
    await page.selectOption('select[name="calendarPolicy"]', 'skip');
    const item = page.locator(`[data-testid="preview-item"][data-local^="${holiday}"]`);
    await until(async () => (await item.getAttribute('data-disposition')) === 'calendar_skip', `the ${holiday} slot skipped by the calendar`);
    expect(await item.textContent()).toContain('skipped: holiday');
    expect(await page.textContent('[data-testid="view-job-editor"]')).toContain('On a non-workday of calendar “China 2026”');
    await snap(page, '44-job-editor-calendar-preview');
    // Not saved: Esc asks, and discarding leaves the job as it was.
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="leave-dialog"]');
    await page.click('[data-testid="leave-discard"]');
    await page.waitForSelector('[data-testid="jobs-table"]');
    expect((await apiCall<{ job: { calendar?: string } }>(g, 'GET', `/jobs/${jobId}`)).job.calendar).toBeUndefined();
  });
});

/** The editor's status panel: the counts it shows and the issues it lists. */
async function editorStatus(p: Page): Promise<{ problems: number; warnings: number; listedErrors: number; listedWarnings: number; text: string }> {
  const count = async (id: string) => Number((await p.locator(`[data-testid="${id}"]`).allTextContents())[0] ?? 0);
  return {
    problems: await count('problem-count'),
    warnings: await count('warning-count'),
    listedErrors: await p.locator('[data-testid="issue-summary"] li[data-severity="error"]').count(),
    listedWarnings: await p.locator('[data-testid="issue-summary"] li[data-severity="warning"]').count(),
    text: (await p.locator('[data-testid="editor-status"]').textContent()) ?? '',
  };
}

describe('the editor can be trusted', () => {
  it('counts what it lists, in the UI’s words; a job saved with a warning saves again after an edit', async () => {
    await go(page, '#/jobs/new', '[data-testid="view-job-editor"]');
    // A new job: name and role are still empty, and the list says so (the count is the list's).
    await until(async () => (await editorStatus(page)).problems === 2, 'two problems on an empty form');
    let st = await editorStatus(page);
    expect([st.problems, st.listedErrors]).toEqual([2, 2]);
    expect(st.text).toContain('Job · Name');
    await page.fill('input[name="name"]', 'every-minute');
    await page.fill('input[name="role"]', 'auditor'); // no agent: its slots must not reach the reporter
    await page.click('[role="radio"]:has-text("Interval")');
    await page.fill('input[name="everyS"]', '60');
    // The default retries (3 × 300 s) cannot fit between slots a minute apart: a warning, not a refusal.
    await until(async () => (await editorStatus(page)).text.includes('valid'), 'valid with a warning');
    st = await editorStatus(page);
    expect(st).toMatchObject({ problems: 0, warnings: 1, listedErrors: 0, listedWarnings: 1 });
    expect(st.text).toContain('Retry: ⚠ 2 retries take 600 s of delays (the default retry settings)');
    // Policy names as the selects show them, never their wire ids.
    await page.selectOption('select[name="missedWindow"]', 'fold_into_next');
    await page.selectOption('select[name="overlap"]', 'allow');
    await until(async () => (await editorStatus(page)).problems === 1, 'the fold/overlap contradiction');
    st = await editorStatus(page);
    expect([st.problems, st.listedErrors, st.warnings, st.listedWarnings]).toEqual([1, 1, 0, 0]);
    expect(st.text).toContain('Overlap · If the previous run is still going: “Fold into the next run” makes the next run cover the missed slots');
    expect(st.text).not.toMatch(/fold_into_next|skip_and_alert|run_now|toleranceS|everyS/);
    // A schema error in the field's words (while the shape is wrong, it is the one problem listed).
    await page.click('[data-testid="add-precondition-file"]');
    await until(async () => (await fieldIssues('preconditions.0.path')) === 'Path cannot be empty', 'the empty path in words');
    st = await editorStatus(page);
    expect([st.problems, st.listedErrors]).toEqual([1, 1]);
    expect(st.text).toContain('Check 1 · Path: Path cannot be empty');
    expect(st.text).not.toMatch(/Too small|expected string/);
    await snap(page, '45-job-editor-trusted-1440');
    await page.click('[data-testid="precondition-0"] [aria-label="Remove check 1"]');
    await page.selectOption('select[name="overlap"]', 'skip');
    await page.selectOption('select[name="missedWindow"]', 'skip_and_alert');
    await until(async () => (await editorStatus(page)).warnings === 1 && (await editorStatus(page)).problems === 0, 'back to one warning');
    await page.click('[data-testid="save-job"]');
    await page.click('[data-testid="rehearse-offer-skip"]');
    await page.waitForSelector('[data-testid="job-version"]');
    expect(await page.textContent('[data-testid="job-version"]')).toBe('version 1');
    // The stored job (defaults filled in) still has one warning and no problem; an edit saves.
    await until(async () => (await editorStatus(page)).text.includes('valid'), 'the stored job is valid');
    expect(await editorStatus(page)).toMatchObject({ problems: 0, warnings: 1, listedWarnings: 1 });
    await page.fill('textarea[name="payload"]', '{"channel": "ops"}');
    await page.fill('[data-testid="save-reason"]', 'tell ops');
    await page.click('[data-testid="save-job"]');
    await until(async () => (await page.textContent('[data-testid="job-version"]')) === 'version 2', 'version 2 saved');
    expect(await page.locator('[data-testid="editor-status"] .field-error').count()).toBe(0);
  });

  it('leaving with unsaved changes asks first: the rail, Esc, Cancel and the back button', async () => {
    const id = (await apiCall<{ job: { id: string } }>(g, 'GET', '/jobs/every-minute')).job.id;
    await go(page, `#/jobs/${id}`, '[data-testid="preview-item"]');
    await page.fill('input[name="description"]', 'not saved yet');
    // The navigation rail.
    await page.click('[data-testid="nav-dashboard"]');
    await page.waitForSelector('[data-testid="leave-dialog"]');
    expect(await page.textContent('[data-testid="leave-dialog"]')).toContain('Your changes to every-minute are not saved');
    await snap(page, '46-job-editor-leave-1440');
    await page.click('[data-testid="leave-stay"]');
    await page.waitForSelector('[data-testid="leave-dialog"]', { state: 'detached' });
    expect(await page.inputValue('input[name="description"]')).toBe('not saved yet');
    // Esc (outside a field) and the Cancel button ask too.
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('Escape');
    await page.waitForSelector('[data-testid="leave-dialog"]');
    await page.keyboard.press('Escape'); // closes the question: stay
    await page.waitForSelector('[data-testid="leave-dialog"]', { state: 'detached' });
    await page.click('[data-testid="editor-status"] button:has-text("Cancel")');
    await page.waitForSelector('[data-testid="leave-dialog"]');
    await page.click('[data-testid="leave-stay"]');
    // Back: the editor stays, with the text, and asks.
    await page.goBack();
    await page.waitForSelector('[data-testid="leave-dialog"]');
    expect(await page.inputValue('input[name="description"]')).toBe('not saved yet');
    await page.click('[data-testid="leave-discard"]');
    // …and then goes where the back button pointed (the new-job form before), without the changes.
    await until(async () => (await page.evaluate(() => window.location.hash)) === '#/jobs/new', 'the page the back button pointed to');
    // Nothing was saved.
    expect((await apiCall<{ job: { description?: string; version: number } }>(g, 'GET', `/jobs/${id}`)).job).toMatchObject({ version: 2 });
    expect((await apiCall<{ job: { description?: string } }>(g, 'GET', `/jobs/${id}`)).job.description).toBeUndefined();
  });

  it('at 1024×700: the status panel, its list and the leave question fit and read the same', async () => {
    const small = await openConsole(browser, g, { width: 1024, height: 700 });
    const p = small.page;
    await go(p, '#/jobs/every-minute', '[data-testid="preview-item"]');
    // The next slots are in the first screen, beside the form, without scrolling.
    const first = await p.locator('[data-testid="preview-item"] >> nth=0').boundingBox();
    expect(first && first.y >= 0 && first.y + first.height <= 700, JSON.stringify(first)).toBe(true);
    await snap(p, '46-job-editor-preview-1024');
    await p.selectOption('select[name="missedWindow"]', 'run_now');
    await until(async () => (await editorStatus(p)).problems === 1 && (await editorStatus(p)).text.includes('needs a tolerance'), 'the missing tolerance');
    const st = await editorStatus(p);
    expect([st.problems, st.listedErrors, st.warnings, st.listedWarnings]).toEqual([1, 1, 0, 0]); // the retry warning is about “Skip and alert” only
    await p.locator('[data-testid="editor-status"]').scrollIntoViewIfNeeded();
    await snap(p, '47-job-editor-trusted-1024');
    await p.click('[data-testid="nav-jobs"]');
    await p.waitForSelector('[data-testid="leave-dialog"]');
    await snap(p, '48-job-editor-leave-1024');
    await p.click('[data-testid="leave-discard"]');
    await p.waitForSelector('[data-testid="jobs-table"]');
    expect(small.errors).toEqual([]);
    await p.context().close();
    await apiCall(g, 'POST', '/jobs/every-minute/disable', { reason: 'e2e: done with the editor checks' });
  });
});

describe('keyboard and theme', () => {
  it('keyboard: g r / g w / g c / Ctrl+5 reach the new views', async () => {
    await page.locator('main').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('g');
    await page.keyboard.press('r');
    await page.waitForSelector('[data-testid="view-runs"]');
    await page.keyboard.press('g');
    await page.keyboard.press('w');
    await page.waitForSelector('[data-testid="view-why"]');
    await page.keyboard.press('g');
    await page.keyboard.press('c');
    await page.waitForSelector('[data-testid="view-calendars"]');
    await page.keyboard.press('Control+5');
    await page.waitForSelector('[data-testid="view-jobs"]');
  });

  it('light theme screenshots, and no page errors', async () => {
    const light = await openConsole(browser, g, { colorScheme: 'light' });
    await go(light.page, `#/runs/${jobId}`, '[data-testid="heatmap"]');
    await light.page.waitForSelector('[data-testid="ledger-table"] [data-row-key]');
    await snap(light.page, '42-runs-light');
    await go(light.page, `#/jobs/${jobId}`, '[data-testid="preview-item"]');
    await snap(light.page, '43-job-editor-light');
    await light.page.context().close();
    expect(errors).toEqual([]);
    expect(light.errors).toEqual([]);
  });
});
