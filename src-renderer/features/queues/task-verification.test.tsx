// @vitest-environment happy-dom
/** The task pane shows the checks' outcome even when it opens on the board's copy of the task, which does not carry it. */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Task } from '../../../src-main/common/model';
import { KitAgent } from '../../testing/console-kit';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { TaskDetail } from './TaskDetail';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

describe('the task pane’s checks', () => {
  it('opened on the board’s copy (no verification in it), the pane still lists each check with its outcome', async () => {
    const verify = { checks: [{ kind: 'output', name: 'has a summary', schema: { type: 'object', required: ['summary'] } }], onFail: 'needs_human' };
    const { task: created } = await m.kit.call('tasks.create', { title: 'write the changelog', role: 'writer', verify } as never);
    const agent = await KitAgent.join(m.kit, 'writer');
    const claim = (await agent.request('claim')).result as { task: Task; lock: { fence: number } };
    await agent.request('report', { instanceId: agent.instanceId, taskId: created.id, fence: claim.lock.fence, status: 'done', output: { lines: 12 } });
    await m.pass(1000);
    const boardCopy = (await m.kit.call('tasks.list', { role: 'writer' })).items.find((t) => t.id === created.id)!;
    expect(boardCopy.status).toBe('blocked');
    expect(boardCopy.verification).toBeUndefined(); // the board's rows do not carry it: the pane must fetch it
    render(<TaskDetail taskId={created.id} task={boardCopy} names={new Map()} known={new Map()} lockWindowS={300} onAction={() => {}} onClose={() => {}} />, { wrapper: m.wrapper });
    await m.pass(0);
    const checks = screen.getAllByTestId('verification-check');
    expect(checks.map((c) => [c.textContent, c.getAttribute('data-passed')])).toEqual([[expect.stringContaining('has a summary'), 'false']]);
    // The failed check's reason is said once, in its own line: not again in the headline, the
    // held note or the next attempt's error.
    const pane = screen.getByTestId('task-detail');
    expect(pane.textContent!.split("required property 'summary'").length - 1).toBe(1);
    expect(screen.getByTestId('verification').textContent).toContain('Not verified: its check failed');
    expect(pane.textContent).toContain('Held because');
    expect(screen.queryByTestId('agent-question')).toBeNull();
  });
});
