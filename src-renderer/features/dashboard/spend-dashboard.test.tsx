// @vitest-environment happy-dom
/** The dashboard's spend: daily caps, rolling windows and the forecast, from a seeded core. */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { DashboardView } from './DashboardView';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

const HOUR = 3600_000;

describe('the dashboard: spend', () => {
  it('shows each window as a bar in words (used up: when it frees) and the forecast per role against its cap', async () => {
    await m.kit.call('budgets.put', {
      timezone: 'UTC',
      globalDailyUsd: 20,
      perRoleDailyUsd: { dev: 5 },
      windows: [
        { scope: 'role', role: 'dev', hours: 5, maxTokens: 2_000_000 },
        { scope: 'global', hours: 168, maxCostUsd: 50 },
      ],
      reason: 'subscription limits',
    });
    const { job: hourly } = await m.kit.call('jobs.create', { spec: { name: 'hourly', role: 'dev', schedule: { everyS: 3600, timezone: 'UTC' } }, reason: 'new' });
    const { job: nightly } = await m.kit.call('jobs.create', { spec: { name: 'nightly', role: 'ops', schedule: { cron: '0 2 * * *', timezone: 'UTC' } }, reason: 'new' });
    const now = m.kit.clock.now();
    // dev: 2.1M tokens 4 hours ago (the 5-hour window is used up until they leave it, at 13:00), $0.30 a run.
    m.kit.seedUsage({ subject: 'run:h1', role: 'dev', jobId: hourly.id, inputTokens: 2_000_000, outputTokens: 100_000, costUsd: 0.3, at: now - 4 * HOUR });
    m.kit.seedUsage({ subject: 'run:n1', role: 'ops', jobId: nightly.id, costUsd: 12, at: now - 30 * HOUR });
    render(<DashboardView />, { wrapper: m.wrapper });
    await m.pass(0);
    await m.pass(1000);

    expect(screen.getByTestId('window-dev-5').getAttribute('title')).toBe('5-hour window for role dev: 2.1M of 2M tokens, used up: frees at 13:00');
    expect(screen.getByTestId('window-dev-5').className).toContain('cap-reached');
    expect(screen.getByTestId('window-global-168').getAttribute('title')).toBe('168-hour window for all roles: $12.30 of $50');
    expect(screen.getByTestId('window-global-168').querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('25');

    // Forecast: dev runs 24 times a day at $0.30 ($7.20, above its $5 cap); ops once at $12 (the cap for all roles).
    expect(screen.getByTestId('chart-forecast-day')).toBeTruthy();
    expect([...screen.getByTestId('chart-forecast-day-words').querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'Role ops: about $12 of $20 (daily cap)',
      'Role dev: about $7.20 of $5 (daily cap) — above the cap',
      'All roles: about $19.20 of $20 (daily cap)',
    ]);
    expect([...screen.getByTestId('chart-forecast-month-words').querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'Role ops: about $360 of $600 (daily cap × 30)',
      'Role dev: about $216 of $150 (daily cap × 30) — above the cap',
      'All roles: about $576 of $600 (daily cap × 30)',
    ]);
  });

  it('sets a rolling window from the caps dialog; a window with no limit is named and nothing is saved', async () => {
    await m.kit.call('budgets.put', { perRoleDailyUsd: { ops: 3 }, reason: 'a cap' });
    render(<DashboardView />, { wrapper: m.wrapper });
    await m.pass(0);
    await m.pass(1000);
    fireEvent.click(screen.getByTestId('spend-caps-edit'));
    const dialog = screen.getByTestId('spend-caps-dialog');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add a window' }));
    const row = within(dialog).getByTestId('window-row-0');
    const type = (label: string, value: string) => fireEvent.change(within(row).getByLabelText(label), { target: { value } });
    type('Role (empty: all)', 'dev');
    type('Hours', '5');
    fireEvent.change(within(dialog).getByLabelText(/Reason/), { target: { value: 'subscription limit' } });
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    expect(dialog.querySelector('.field-error')!.textContent).toContain('Spend window 1: give it a token limit, a dollar limit, or both.');
    expect((await m.kit.call('budgets.get', {})).settings.windows ?? []).toEqual([]);

    type('Tokens', '2M');
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    await m.pass(0);
    expect((await m.kit.call('budgets.get', {})).settings.windows).toEqual([{ scope: 'role', role: 'dev', hours: 5, maxTokens: 2_000_000 }]);
  });
});
