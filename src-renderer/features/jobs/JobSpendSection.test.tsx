// @vitest-environment happy-dom
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { JobEditor } from './JobEditor';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

const type = (el: HTMLElement, value: string) => fireEvent.change(el, { target: { value } });

async function openEditor(spec: Record<string, unknown> = {}) {
  const { job } = await m.kit.call('jobs.create', { spec: { name: 'report', role: 'dev', schedule: { cron: '0 9 * * *', timezone: 'UTC' }, ...spec }, reason: 'new' });
  render(<JobEditor jobId={job.id} />, { wrapper: m.wrapper });
  await m.pass(0);
  await m.pass(0);
  return job.id;
}

async function saveWith(reason: string) {
  type(screen.getByTestId('save-reason'), reason);
  fireEvent.click(screen.getByTestId('save-job'));
  await m.pass(0);
}

describe('the job editor: spend', () => {
  it('a cap typed in the Spend section is stored with the job; emptied, the job has none', async () => {
    const id = await openEditor();
    const section = screen.getByTestId('section-spend');
    type(section.querySelector('[data-testid="cap-usd"]')!, '$0.50');
    type(section.querySelector('[data-testid="cap-tokens"]')!, '200,000');
    await saveWith('cap the report');
    expect(m.kit.core.jobs.get(id).budget).toEqual({ maxCostUsdPerRun: 0.5, maxTokensPerRun: 200000 });
    expect(screen.getByTestId('spend-sentence').textContent).toContain('at most $0.50 or 200,000 tokens');
    type(section.querySelector('[data-testid="cap-usd"]')!, '');
    type(section.querySelector('[data-testid="cap-tokens"]')!, '');
    await saveWith('no cap after all');
    expect(m.kit.core.jobs.get(id).version).toBe(3);
    expect(m.kit.core.jobs.get(id).budget).toBeUndefined();
  });

  it('a cap that is not an amount is an issue at the field, and nothing is saved', async () => {
    const id = await openEditor({ budget: { maxCostUsdPerRun: 1 } });
    const section = screen.getByTestId('section-spend');
    expect((section.querySelector('[data-testid="cap-usd"]') as HTMLInputElement).value).toBe('1');
    type(section.querySelector('[data-testid="cap-usd"]')!, '-2');
    await saveWith('oops');
    expect(section.textContent).toContain('The cost cap is a positive amount of dollars');
    expect(m.kit.core.jobs.get(id)).toMatchObject({ version: 1, budget: { maxCostUsdPerRun: 1 } });
  });

  it('a saved job: the forecast of its runs next to the daily cap of its role', async () => {
    await m.kit.call('budgets.put', { perRoleDailyUsd: { dev: 5 }, reason: 'cap dev' });
    const { job } = await m.kit.call('jobs.create', { spec: { name: 'hourly', role: 'dev', schedule: { everyS: 3600, timezone: 'UTC' } }, reason: 'new' });
    for (let i = 1; i <= 4; i++) m.kit.seedUsage({ subject: `run:r${i}`, role: 'dev', jobId: job.id, costUsd: 0.2, at: m.kit.clock.now() - i * 3600_000 });
    render(<JobEditor jobId={job.id} />, { wrapper: m.wrapper });
    await m.pass(0);
    await m.pass(0);
    expect(screen.getByTestId('job-forecast').textContent).toBe(
      'About $4.80 a day (24 runs at about $0.20 each, up to $0.20); your cap for role dev is $5 a day. That is about $144 over the next 30 days.',
    );
  });
});
