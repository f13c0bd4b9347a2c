/**
 * A flooding managed process costs Gaffer a bounded amount: what is kept and read per window is
 * capped, the rest is dropped and said. Time is a number the test sets (no timing asserts); the
 * last test floods a real managed process (through the shim) whose clock never moves, so
 * everything it prints falls in one window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_OUTPUT_RATE, OutputRate } from './output-rate';
import type { ManagedDefinition } from '../../common/managed-agents';
import { waitFor } from '../../cli/agent/testing/processes';
import { sourceRoot } from '.';
import { launchPaths } from './launch';
import { NodeProcessSpawner, type NodeManagedProcess } from './spawner';

const limits = { keepBytesPerS: 1000, readBytesPerS: 5000 };

describe('OutputRate', () => {
  it('keeps the first bytes of a window, drops the rest, pauses once the read cap is reached', () => {
    let now = 0;
    const rate = new OutputRate(() => now, limits);
    expect(rate.admit(600)).toEqual({ keep: 600, pauseMs: 0 });
    expect(rate.admit(600)).toEqual({ keep: 400, pauseMs: 0 });
    expect(rate.admit(3000)).toEqual({ keep: 0, pauseMs: 0 });
    now = 250;
    expect(rate.admit(800)).toEqual({ keep: 0, pauseMs: 750 }); // 5000 read in this window: wait for the next
    expect([rate.totalKept, rate.totalDropped]).toEqual([1000, 4000]);
    expect(rate.takeDroppedNotice()).toBe('[gaffer: 4000 bytes of output dropped: more than 1000 bytes a second is not kept]');
    expect(rate.takeDroppedNotice()).toBeUndefined();
    now = 1000; // a new window
    expect(rate.admit(100)).toEqual({ keep: 100, pauseMs: 0 });
    expect(rate.takeDroppedNotice()).toBeUndefined();
  });

  it('below the caps nothing is dropped and nothing waits', () => {
    let now = 0;
    const rate = new OutputRate(() => now);
    for (let i = 0; i < 100; i++, now += 100) expect(rate.admit(DEFAULT_OUTPUT_RATE.keepBytesPerS / 10).keep).toBe(DEFAULT_OUTPUT_RATE.keepBytesPerS / 10);
    expect(rate.totalDropped).toBe(0);
  });
});

const started: NodeManagedProcess[] = [];
afterEach(() => {
  for (const p of started.splice(0)) p.stop(0, true);
});

describe.skipIf(process.platform === 'win32')('a managed process that floods its output', () => {
  it('has its captured output bounded, and the dropped bytes said in a line', async () => {
    const total = 3 * 1024 * 1024; // under the read cap: nothing waits, the rest is dropped
    const keep = 64 * 1024;
    const spawner = new NodeProcessSpawner(launchPaths(sourceRoot(), process.execPath), { PATH: process.env.PATH }, undefined, { now: () => 0, limits: { keepBytesPerS: keep, readBytesPerS: 8 * 1024 * 1024 } });
    const definition = { mode: 'long_running', role: 'x', command: ['/bin/sh', '-c', `yes | head -c ${total}`], env: {}, cwd: null } as unknown as ManagedDefinition;
    const proc = spawner.launch({ managedId: 'm', definition, instance: 1, name: 'flood-1', agentUrl: 'ws://127.0.0.1:1/agent', token: 'gft_flood-test-token', marker: 'test/flood' });
    started.push(proc);
    const lines: string[] = [];
    proc.onOutput((_s, text) => lines.push(text));
    const exit = await new Promise((r) => proc.onExit(r));
    expect(exit).toMatchObject({ code: 0 });
    // Said when a stream ends (the two streams share the budget: each says what was dropped until then).
    const said = () => lines.map((l) => /^\[gaffer: (\d+) bytes of output dropped: more than 65536 bytes a second is not kept\]$/.exec(l)).reduce((n, m) => n + (m ? Number(m[1]) : 0), 0);
    await waitFor(() => said() === total - keep, `the dropped bytes to be said (last lines: ${lines.slice(-3).join(' | ')})`);
    const kept = lines.filter((l) => l === 'y');
    expect(kept.length * 2).toBe(keep);
    expect(lines.filter((l) => l !== 'y').every((l) => l.startsWith('[gaffer: '))).toBe(true);
    expect([proc.outputRate.totalKept, proc.outputRate.totalDropped]).toEqual([keep, total - keep]);
  });
});
