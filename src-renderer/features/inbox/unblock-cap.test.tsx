// @vitest-environment happy-dom
/** The inbox's unblock dialog takes a new spend cap for the task's next attempt (as approving a run does). */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedBlockedTask } from '../../testing/console-kit';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { TaskDecisionDialog } from './ItemDialogs';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

const type = (el: Element, value: string) => fireEvent.change(el, { target: { value } });

describe('unblocking a task from its inbox item', () => {
  it('with a new cap: stored for the next attempt; a bad one is said and nothing changes', async () => {
    const id = await seedBlockedTask(m.kit, { title: 'needs a branch', role: 'dev', budget: { maxCostUsdPerRun: 0.1 } });
    const item = (await m.kit.call('inbox.list', {})).items.find((i) => i.subject === `task:${id}`)!;
    render(<TaskDecisionDialog item={item} decision="unblock" onClose={() => {}} />, { wrapper: m.wrapper });
    const dialog = screen.getByTestId('task-decision-dialog');
    type(dialog.querySelector('textarea[name="reason"]')!, 'use main');
    type(dialog.querySelector('[data-testid="cap-tokens"]')!, 'many');
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    expect(dialog.textContent).toContain('The token cap is a positive whole number');
    expect(await m.kit.call('tasks.get', { taskId: id })).toMatchObject({ status: 'blocked' });
    type(dialog.querySelector('[data-testid="cap-tokens"]')!, '');
    type(dialog.querySelector('[data-testid="cap-usd"]')!, '0.50');
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    expect(await m.kit.call('tasks.get', { taskId: id })).toMatchObject({ status: 'backlog' });
    expect((await m.kit.call('budgets.attemptSpend', { subject: `task:${id}` })).cap).toEqual({ maxCostUsdPerRun: 0.5 });
  });
});
