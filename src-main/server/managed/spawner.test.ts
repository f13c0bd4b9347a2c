/**
 * A managed process runs below Gaffer's CPU priority (spawner.ts invariant 5): its nice value is the
 * setting's, so is its command's (started by it, through the shim), and on Linux with autogroup
 * scheduling so is its session's share of the CPU. Real processes; each test ends them.
 */
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import type { ManagedDefinition } from '../../common/managed-agents';
import { autogroupNice, autogroups, waitFor } from '../../cli/agent/testing/processes';
import { sourceRoot } from '.';
import { launchPaths } from './launch';
import { NodeProcessSpawner, type NodeManagedProcess } from './spawner';

const started: NodeManagedProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) p.stop(0, true);
});

let launches = 0;
/**
 * A long-running managed process whose command prints its own pid, then waits. Each gets a marker of
 * its own, as the supervisor's are: a shim that is stopped ends whatever carries its marker, so a
 * shared one let the last test's shim kill the next test's before it started.
 */
function launch(nice: number) {
  const spawner = new NodeProcessSpawner(launchPaths(sourceRoot(), process.execPath), { PATH: process.env.PATH }, undefined, {}, nice);
  const definition = { mode: 'long_running', role: 'x', command: ['/bin/sh', '-c', 'echo "pid $$"; exec sleep 30'], env: {}, cwd: null } as unknown as ManagedDefinition;
  const proc = spawner.launch({ managedId: 'm', definition, instance: 1, name: 'nice-1', agentUrl: 'ws://127.0.0.1:1/agent', token: 'gft_nice-test-token', marker: `test/nice/${++launches}` });
  started.push(proc);
  let commandPid = 0;
  proc.onOutput((_s, text) => {
    const m = /^pid (\d+)$/.exec(text);
    if (m) commandPid = Number(m[1]);
  });
  return { proc, command: async () => (await waitFor(() => commandPid > 0, "the command's pid"), commandPid) };
}

// The test process must be below 7 itself to see the difference (it is 0 unless run under `nice`).
describe.skipIf(process.platform === 'win32' || os.getPriority() >= 7)('a managed process and its CPU priority', () => {
  it("runs at the setting's nice value, and so does the command it starts", async () => {
    const { proc, command } = launch(7);
    expect(os.getPriority(proc.pid!)).toBe(7);
    expect(os.getPriority(await command())).toBe(7);
  });

  it.skipIf(!autogroups)("Linux autogroup: its session's share of the CPU is lowered too (a nice value alone only orders threads inside one session)", async () => {
    const own = autogroupNice(process.pid);
    const { proc, command } = launch(7);
    await command();
    expect(autogroupNice(proc.pid!)).toBe(7);
    expect(autogroupNice(process.pid)).toBe(own); // Gaffer's own session is left as it was
  });

  it("0 leaves it at Gaffer's own priority", async () => {
    const { proc, command } = launch(0);
    expect(os.getPriority(await command())).toBe(os.getPriority());
    expect(os.getPriority(proc.pid!)).toBe(os.getPriority());
  });
});
