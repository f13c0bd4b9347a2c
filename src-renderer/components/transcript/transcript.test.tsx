// @vitest-environment happy-dom
/** The transcript built from log lines (PROTOCOL §16) and one item rendered: safe markdown, errors marked. */
import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLine } from '../../../src-main/common/logs';
import { buildTranscript, estimateHeight } from './transcript';
import { markdown, TranscriptItemView } from './TranscriptItemView';

afterEach(cleanup);

let seq = 0;
const line = (text: string, extra: Partial<LogLine> = {}): LogLine => ({ seq: ++seq, at: '2026-12-01T10:00:00.000Z', attempt: 1, stream: 'stdout', level: 'info', text, ...extra });

describe('buildTranscript', () => {
  it('joins split messages, attaches results to their calls (by id, else by name), keeps plain output and every line', () => {
    const items = buildTranscript([
      line('claude session s1 started', { kind: 'system', data: { cli: 'claude', sessionId: 's1' } }),
      line("I'll run the tests.", { kind: 'assistant', data: { model: 'm', usage: { inputTokens: 12, outputTokens: 40 } } }),
      line('Then fix them.', { kind: 'assistant' }),
      line('tool Bash: npm test', { kind: 'tool_call', data: { id: 't1', name: 'Bash', input: { command: 'npm test' } } }),
      line('tool failed: 1 failing', { kind: 'tool_result', level: 'warn', data: { id: 't1', name: 'Bash', output: '1 failing', isError: true } }),
      line('$ ls', { kind: 'tool_call', data: { name: 'shell', input: { command: 'ls' } } }),
      line('$ ls → exit 0', { kind: 'tool_result', data: { name: 'shell', output: 'a\nb', exitCode: 0, isError: false } }),
      line('files changed: a.ts', { kind: 'tool_result', data: { name: 'file_change', input: { changes: [] }, isError: false } }),
      line('not json', {}),
      line('still not json', {}),
      line('oops', { stream: 'stderr', level: 'warn' }),
      line('claude finished', { kind: 'result', data: { isError: false, costUsd: 0.04, numTurns: 3, result: 'Fixed **it**.' } }),
    ]);
    expect(items.map((i) => i.type)).toEqual(['system', 'message', 'tool', 'tool', 'tool', 'output', 'output', 'result']);
    expect(items[1]).toMatchObject({ text: "I'll run the tests.\nThen fix them.", model: 'm', usage: { inputTokens: 12, outputTokens: 40 } });
    expect(items[2]).toMatchObject({ name: 'Bash', input: { command: 'npm test' }, output: '1 failing', isError: true, done: true });
    expect(items[3]).toMatchObject({ name: 'shell', output: 'a\nb', exitCode: 0, isError: false, done: true });
    expect(items[4]).toMatchObject({ name: 'file_change', done: true });
    expect(items[5]).toMatchObject({ stream: 'stdout', lines: ['not json', 'still not json'] });
    expect(items[6]).toMatchObject({ stream: 'stderr', lines: ['oops'], warn: true });
    expect(items[7]).toMatchObject({ text: 'Fixed **it**.', costUsd: 0.04, numTurns: 3, isError: false });
  });
});

describe('TranscriptItemView', () => {
  it('renders markdown without raw HTML, and marks a failed tool', () => {
    const { container } = render(<TranscriptItemView item={{ type: 'message', seq: 1, at: '', text: '**bold** <img src=x onerror="alert(1)"><script>alert(1)</script>', thinking: false, usage: { inputTokens: 3, outputTokens: 5 } }} />);
    expect(container.querySelector('strong')?.textContent).toBe('bold');
    expect(container.querySelector('img, script')).toBeNull();
    expect(container.textContent).toContain('3 in · 5 out tokens');
    const tool = render(<TranscriptItemView item={{ type: 'tool', seq: 2, at: '', name: 'Bash', input: { command: 'npm test' }, output: '1 failing', done: true, isError: true, exitCode: 1 }} />);
    const details = tool.container.querySelector('details')!;
    expect(details.className).toContain('tx-failed');
    expect(details.querySelector('summary')!.textContent).toContain('✗ failed (exit 1)');
    expect(details.textContent).toContain('1 failing');
  });
});

describe('a long transcript stays cheap to scroll', () => {
  it('a text is parsed once: shown again (a row scrolled back into view), its rendered markdown is reused; the cache is bounded', () => {
    const first = markdown('**again** and again');
    expect(markdown('**again** and again')).toBe(first);
    expect(render(first).container.querySelector('strong')?.textContent).toBe('again');
    for (let i = 0; i < 600; i++) markdown(`text ${i}`);
    expect(markdown('**again** and again')).not.toBe(first);
  });

  it('rows are estimated from their text before they are measured: a long message is estimated taller than a short one', () => {
    const message = (text: string) => estimateHeight({ type: 'message', seq: 1, at: '', text, thinking: false });
    const short = message('ok');
    const long = message(['### Step', '', 'a paragraph '.repeat(40), '', '- one', '- two', '', '```ts', 'code', '```'].join('\n'));
    expect(long).toBeGreaterThan(short * 4);
    expect(estimateHeight({ type: 'output', seq: 2, at: '', stream: 'stdout', lines: ['a', 'b', 'c'], warn: false })).toBeGreaterThan(
      estimateHeight({ type: 'output', seq: 3, at: '', stream: 'stdout', lines: ['a'], warn: false }),
    );
  });
});
