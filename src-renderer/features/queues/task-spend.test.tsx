// @vitest-environment happy-dom
/** Spend caps of tasks in the console: set in the new-task dialog, shown in the task pane as a bar that ticks. */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Task } from '../../../src-main/common/model';
import { KitAgent, seedBlockedTask } from '../../testing/console-kit';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { TaskDetail } from './TaskDetail';
import { CreateTaskDialog, TaskActionDialog } from './TaskDialogs';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

const type = (el: Element, value: string) => fireEvent.change(el, { target: { value } });

async function createThroughDialog(cap: { usd: string; tokens?: string }) {
  const onCreated = vi.fn();
  render(<CreateTaskDialog defaultRole="dev" roles={['dev']} onClose={() => {}} onCreated={onCreated} />, { wrapper: m.wrapper });
  const dialog = screen.getByTestId('dialog-create-task');
  type(dialog.querySelector('input[name="title"]')!, 'fix the flaky test');
  type(dialog.querySelector('[data-testid="cap-usd"]')!, cap.usd);
  if (cap.tokens !== undefined) type(dialog.querySelector('[data-testid="cap-tokens"]')!, cap.tokens);
  fireEvent.submit(dialog.querySelector('form')!);
  await m.pass(0);
  return onCreated;
}

describe('a task’s spend cap in the console', () => {
  it('the new-task dialog creates the task with the cap typed', async () => {
    const onCreated = await createThroughDialog({ usd: '0.10', tokens: '50000' });
    const task = onCreated.mock.calls[0]![0] as Task;
    expect(await m.kit.call('budgets.attemptSpend', { subject: `task:${task.id}` })).toMatchObject({ cap: { maxCostUsdPerRun: 0.1, maxTokensPerRun: 50000 }, capFrom: 'task' });
  });

  it('a cap that is not an amount is said in words, and no task is created', async () => {
    const onCreated = await createThroughDialog({ usd: 'ten cents' });
    expect(screen.getByTestId('error-budget').textContent).toBe('The cost cap is a positive amount of dollars, e.g. 0.50.');
    expect(onCreated).not.toHaveBeenCalled();
    expect(m.kit.countCalls('tasks.create')).toBe(0);
  });

  it('the task pane shows this attempt’s spend against the cap as a bar, ticking as usage arrives', async () => {
    const { task: created } = await m.kit.call('tasks.create', { title: 'fix', role: 'dev', budget: { maxCostUsdPerRun: 0.1 } });
    const agent = await KitAgent.join(m.kit, 'dev');
    const claim = (await agent.request('claim')).result as { task: Task; lock: { fence: number } };
    await agent.request('usage', { taskId: created.id, inputTokens: 1000, outputTokens: 200, costUsd: 0.04, model: 'm' });
    const task = await m.kit.call('tasks.get', { taskId: created.id });
    render(<TaskDetail taskId={task.id} task={task} names={new Map()} known={new Map()} lockWindowS={300} onAction={() => {}} onClose={() => {}} />, { wrapper: m.wrapper });
    await m.pass(0);
    const row = () => screen.getByTestId('attempt-spend');
    expect(row().textContent).toContain('$0.04 of $0.10');
    expect(row().querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('40');
    // The agent works on: a message (logged) with its usage; the bar follows without a reload.
    await agent.request('usage', { taskId: created.id, inputTokens: 500, outputTokens: 100, costUsd: 0.03, model: 'm' });
    await agent.request('log', { taskId: created.id, fence: claim.lock.fence, lines: [{ text: 'editing the test', stream: 'stdout' }] });
    await m.pass(1000);
    expect(row().textContent).toContain('$0.07 of $0.10');
    expect(row().querySelector('[role="progressbar"]')!.getAttribute('aria-valuenow')).toBe('70');
  });

  it('unblocking from the task pane takes a new cap; a bad one is said and nothing changes', async () => {
    const id = await seedBlockedTask(m.kit, { title: 'from the pane', role: 'dev', budget: { maxCostUsdPerRun: 0.1 } });
    render(<TaskActionDialog task={await m.kit.call('tasks.get', { taskId: id })} kind="unblock" onClose={() => {}} />, { wrapper: m.wrapper });
    const dialog = screen.getByTestId('dialog-unblock');
    type(dialog.querySelector('textarea[name="reason"]')!, 'go on, with more room');
    type(dialog.querySelector('[data-testid="cap-usd"]')!, 'lots');
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    expect(dialog.textContent).toContain('The cost cap is a positive amount of dollars');
    expect(await m.kit.call('tasks.get', { taskId: id })).toMatchObject({ status: 'blocked' });
    type(dialog.querySelector('[data-testid="cap-usd"]')!, '0.25');
    fireEvent.submit(dialog.querySelector('form')!);
    await m.pass(0);
    expect(await m.kit.call('tasks.get', { taskId: id })).toMatchObject({ status: 'backlog' });
    expect((await m.kit.call('budgets.attemptSpend', { subject: `task:${id}` })).cap).toEqual({ maxCostUsdPerRun: 0.25 });
  });
});
