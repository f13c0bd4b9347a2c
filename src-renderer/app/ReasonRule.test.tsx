// @vitest-environment happy-dom
/**
 * "Require a reason for actions" in the console, over the real method table (testing/console-kit):
 * off (the default), a reason dialog says "(optional)" and submits without one, audited as "no
 * reason given"; turned on in Settings, the same dialog asks for one and does not submit.
 */
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { SettingsView } from '../features/settings/SettingsView';
import { createConsoleStore, type ConsoleStore } from '../store/console-store';
import { ConsoleStoreProvider } from '../store/react';
import { ConsoleKit } from '../testing/console-kit';
import { ReasonRuleProvider } from './ReasonRule';

let made: Array<ConsoleStore | ConsoleKit> = [];
afterEach(() => {
  cleanup();
  made.forEach((m) => m.dispose());
  made = [];
});

function mount() {
  const kit = new ConsoleKit();
  const cs = createConsoleStore(kit, { timers: kit.timers, now: kit.timers.now, liveIntervalMs: 250, refreshIntervalMs: 1000, safetyRefreshMs: 600_000 });
  made.push(cs, kit);
  cs.actions.start();
  render(
    <ConsoleStoreProvider value={cs}>
      <ReasonRuleProvider>
        <SettingsView />
      </ReasonRuleProvider>
    </ConsoleStoreProvider>,
  );
  const settle = () =>
    act(async () => {
      kit.timers.advance(0);
      for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
    });
  return { kit, settle };
}

const lastAudit = (kit: ConsoleKit) => kit.core.auditQuery.query({ order: 'desc', limit: 1 }).items[0]!;

describe('the reason setting in the console', () => {
  it('off (the default): the kill switch dialog submits without a reason, audited as "no reason given"', async () => {
    const { kit, settle } = mount();
    await settle();
    fireEvent.click(screen.getByTestId('kill-switch-toggle'));
    const dialog = screen.getByTestId('dialog-kill-switch');
    expect(dialog.textContent).toContain('Reason (optional)');
    fireEvent.submit(dialog.querySelector('form')!);
    await settle();
    expect(kit.core.jobs.killSwitch()).toBe(true);
    expect(lastAudit(kit)).toMatchObject({ type: 'operator.kill_switch', detail: { reason: 'no reason given', to: true } });
  });

  it('on: the same dialog asks for a reason and sends nothing without one', async () => {
    const { kit, settle } = mount();
    await settle();
    fireEvent.click(screen.getByTestId('require-reason'));
    await settle();
    expect(kit.core.operatorSettings.read().requireReason).toBe(true);
    fireEvent.click(screen.getByTestId('kill-switch-toggle'));
    const dialog = screen.getByTestId('dialog-kill-switch');
    expect(dialog.textContent).not.toContain('Reason (optional)');
    fireEvent.submit(dialog.querySelector('form')!);
    await settle();
    expect(dialog.textContent).toContain('A reason is required');
    expect(kit.countCalls('settings.setKillSwitch')).toBe(0);
    expect(kit.core.jobs.killSwitch()).toBe(false);
  });
});
