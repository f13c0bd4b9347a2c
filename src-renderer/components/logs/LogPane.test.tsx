// @vitest-environment happy-dom
/** The raw log's line count follows the live tail (it said "1 lines" with 6 on screen). */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogAttemptsResult } from '../../../src-main/common/console-api';
import { LogPane } from './LogPane';

afterEach(cleanup);

const usage = { inputTokens: 0, outputTokens: 0, costUsd: 0 };
const attempts: LogAttemptsResult = {
  attempts: [{ attempt: 1, lines: 1, bytes: 5, firstSeq: 1, lastSeq: 1, firstAt: '2026-12-01T10:00:00.000Z', lastAt: '2026-12-01T10:00:00.000Z', truncated: false, dropped: 0, usage }],
  usage,
};

describe('LogPane', () => {
  it('counts the lines the live tail brought, in plain words', async () => {
    const props = {
      subject: 'task:1',
      loadAttempts: () => Promise.resolve(attempts),
      loadPage: () => Promise.resolve({ items: [], next: null }),
      loadText: () => Promise.resolve({ filename: 'x', text: '', complete: true }),
      save: () => {},
      follow: () => () => {},
    };
    const { rerender } = render(<LogPane {...props} tail={undefined} />);
    expect((await screen.findByText(/^1 line ·/)).textContent).toMatch(/^1 line · no usage reported/);
    rerender(<LogPane {...props} tail={{ attempt: 1, lastSeq: 6 }} />);
    expect((await screen.findByText(/^6 lines ·/)).textContent).toMatch(/^6 lines · /);
  });
});
