// @vitest-environment happy-dom
/** The Tasks and Runs lists' duration and cost cells. */
import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { Run } from '../../src-main/common/job-schema';
import type { Task } from '../../src-main/common/model';
import { CostCell, DurationCell, runDurationMs, taskDurationMs } from './row-usage';

afterEach(cleanup);
const T = Date.parse('2026-12-01T10:00:00.000Z');
const usage = (costUsd: number, latestAttemptMs: number | null = 90_000) => ({ usage: { inputTokens: 1200, outputTokens: 300, costUsd }, latestAttemptMs });

describe('row usage cells', () => {
  it('a held task counts from its claim; another its latest attempt; a run start to finish (or now)', () => {
    const held = { status: 'in_progress', lock: { claimedAt: new Date(T - 125_000).toISOString() } } as Task;
    expect(taskDurationMs(held, usage(0), T)).toBe(125_000);
    expect(taskDurationMs({ status: 'done', lock: null } as Task, usage(0), T)).toBe(90_000);
    expect(taskDurationMs({ status: 'backlog', lock: null } as Task, undefined, T)).toBeNull();
    expect(runDurationMs({ startedAt: new Date(T - 60_000).toISOString(), finishedAt: new Date(T - 30_000).toISOString() } as Run, T)).toBe(30_000);
    expect(runDurationMs({ startedAt: new Date(T - 60_000).toISOString(), finishedAt: null } as Run, T)).toBe(60_000);
    expect(runDurationMs({ startedAt: null, finishedAt: null } as Run, T)).toBeNull();
  });

  it('says the duration and the cost in plain words, a dash when there is none', () => {
    expect(render(<DurationCell ms={125_000} />).container.textContent).toBe('2 min 5 s');
    expect(render(<DurationCell ms={null} />).container.textContent).toBe('—');
    const cost = render(<CostCell usage={usage(0.0421)} />).container.querySelector('span')!;
    expect(cost.textContent).toBe('$0.0421');
    expect(cost.title).toBe('1,200 tokens in, 300 out');
    expect(render(<CostCell usage={{ usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 }, latestAttemptMs: null }} />).container.textContent).toBe('—');
  });
});
