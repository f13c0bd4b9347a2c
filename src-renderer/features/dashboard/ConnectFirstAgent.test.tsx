// @vitest-environment happy-dom
/**
 * The first-start card over the real method table (testing/console-kit): "Connect Claude Code"
 * asks for the role (focus on it) and defines a managed agent that runs the printed recipe through
 * the shell, the task on its stdin, read as claude-stream-json, named after the role.
 */
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_RECIPE } from '../../lib/agent-commands';
import { createConsoleStore, type ConsoleStore } from '../../store/console-store';
import { ConsoleStoreProvider } from '../../store/react';
import { ConsoleKit } from '../../testing/console-kit';
import { ConnectFirstAgent } from './ConnectFirstAgent';

let made: Array<ConsoleStore | ConsoleKit> = [];
afterEach(() => {
  cleanup();
  made.forEach((m) => m.dispose());
  made = [];
});

describe('the first-start card', () => {
  it('"Connect Claude Code" makes a managed agent for the role: the recipe on stdin, --parse claude-stream-json, named after the role', async () => {
    const kit = new ConsoleKit();
    const cs = createConsoleStore(kit, { timers: kit.timers, now: kit.timers.now });
    made.push(cs, kit);
    render(
      <ConsoleStoreProvider value={cs}>
        <ConnectFirstAgent />
      </ConsoleStoreProvider>,
    );
    fireEvent.click(screen.getByTestId('connect-claude'));
    const role = screen.getByLabelText(/^Role/);
    expect(document.activeElement).toBe(role);
    // No role: nothing is created.
    fireEvent.submit(screen.getByTestId('connect-cli-dialog').querySelector('form')!);
    expect(kit.countCalls('managedAgents.create')).toBe(0);
    fireEvent.change(role, { target: { value: 'dev' } });
    fireEvent.change(screen.getByLabelText(/^Working directory/), { target: { value: '/home/me/repo' } });
    fireEvent.submit(screen.getByTestId('connect-cli-dialog').querySelector('form')!);
    await act(async () => {
      for (let i = 0; i < 10; i++) await new Promise<void>((r) => setImmediate(r));
    });
    const agents = kit.core.managed.list();
    expect(agents).toHaveLength(1);
    expect(agents[0]).toMatchObject({ name: 'dev-claude', role: 'dev', mode: 'per_task', command: [CLAUDE_RECIPE], shell: true, parse: 'claude-stream-json', timeoutS: 1800, cwd: '/home/me/repo' });
    // The prompt and the task reach the CLI on its stdin, never as an argument.
    expect(CLAUDE_RECIPE).toMatch(/cat; \} \| claude -p --output-format stream-json/);
    expect(screen.queryByTestId('connect-cli-dialog')).toBeNull();
  });
});
