/**
 * Live cost (PROTOCOL §14): the adapters send usage per message as it streams, and the CLI's own
 * final figures as `final: true`; the reporter never sums a final report into an increment.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ADAPTERS, type AdapterSink } from '.';
import { UsageMeter, UsageReporter, type UsageIncrement } from '../usage';

const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, 'fixtures', name), 'utf8').split('\n').filter((l) => l && !l.startsWith('#') && !l.startsWith('stderr: '));

function feed(format: string, lines: string[], opts?: { model?: string }): UsageIncrement[] {
  const usage: UsageIncrement[] = [];
  const sink: AdapterSink = { log: () => {}, usage: (u) => void usage.push(u), session: () => {} };
  const a = ADAPTERS[format]!.create(opts);
  for (const l of lines) a.line(l, sink);
  a.end?.(sink);
  return usage;
}

/** A reporter whose first frame stays in flight until `release()`: what arrives meanwhile waits. */
function gatedReporter() {
  const sent: UsageIncrement[] = [];
  let release!: () => void;
  const gate = new Promise<void>((res) => (release = res));
  const r = new UsageReporter(async (u) => {
    sent.push(u);
    if (sent.length === 1) await gate;
  });
  return { sent, r, release };
}

const assistant = (id: string, usage: Record<string, number>, text = 'x') =>
  JSON.stringify({ type: 'assistant', message: { id, model: 'claude-sonnet-4-5', content: [{ type: 'text', text }], usage } });

describe('usage as it streams', () => {
  it('claude-stream-json: one estimated increment per assistant message, then the result as final with the CLI cost', () => {
    const u = feed('claude-stream-json', fixture('claude-stream.jsonl'));
    expect(u).toEqual([
      { inputTokens: 12, outputTokens: 40, estimated: true, model: 'claude-sonnet-4-5' },
      { inputTokens: 30, outputTokens: 25, estimated: true, model: 'claude-sonnet-4-5' },
      { inputTokens: 8, outputTokens: 12, estimated: true, model: 'claude-sonnet-4-5' },
      { inputTokens: 9250, outputTokens: 77, cacheReadTokens: 8000, cacheWriteTokens: 1200, costUsd: 0.04215, final: true, model: 'claude-sonnet-4-5' },
    ]);
  });

  it('claude-stream-json: lines of one message (same id) repeat its usage; only what grew is sent', () => {
    const u = feed('claude-stream-json', [
      assistant('msg_1', { input_tokens: 10, cache_read_input_tokens: 500, output_tokens: 1 }),
      assistant('msg_1', { input_tokens: 10, cache_read_input_tokens: 500, output_tokens: 1 }),
      assistant('msg_1', { input_tokens: 10, cache_read_input_tokens: 500, output_tokens: 30 }),
      assistant('msg_2', { input_tokens: 5, cache_creation_input_tokens: 100, output_tokens: 7 }),
    ]);
    expect(u).toEqual([
      { inputTokens: 510, outputTokens: 1, cacheReadTokens: 500, estimated: true, model: 'claude-sonnet-4-5' },
      { inputTokens: 0, outputTokens: 29, estimated: true, model: 'claude-sonnet-4-5' },
      { inputTokens: 105, outputTokens: 7, cacheWriteTokens: 100, estimated: true, model: 'claude-sonnet-4-5' },
    ]);
  });

  it('codex-json: one estimated increment per turn, cached input apart, priced by the model the agent names', () => {
    const u = feed('codex-json', fixture('codex.jsonl'), { model: 'gpt-5-codex' });
    expect(u).toEqual([
      { inputTokens: 24763, outputTokens: 122, cacheReadTokens: 24448, estimated: true, model: 'gpt-5-codex' },
      { inputTokens: 1000, outputTokens: 30, cacheReadTokens: 900, estimated: true, model: 'gpt-5-codex' },
    ]);
  });

  it('gemini-stream-json: the result stats (its only usage) as the final totals, to be priced by Gaffer', () => {
    expect(feed('gemini-stream-json', fixture('gemini-stream.jsonl'))).toEqual([
      { inputTokens: 5100, outputTokens: 130, estimated: true, final: true, model: 'gemini-2.5-pro' },
    ]);
  });
});

describe('a final report', () => {
  it('replaces the meter totals instead of adding to them', () => {
    const m = new UsageMeter();
    m.add({ inputTokens: 100, outputTokens: 10, costUsd: 0.5, estimated: true });
    m.add({ inputTokens: 120, outputTokens: 12, costUsd: 0.3, final: true });
    expect(m.total).toMatchObject({ inputTokens: 120, outputTokens: 12, costUsd: 0.3 });
  });

  it('goes in a frame of its own, after the increments waiting before it', async () => {
    const { sent, r, release } = gatedReporter();
    r.add({ inputTokens: 1, estimated: true, model: 'm' });
    r.add({ inputTokens: 2, estimated: true, model: 'm' });
    r.add({ inputTokens: 100, costUsd: 1, final: true, model: 'm' });
    r.add({ inputTokens: 3, estimated: true, model: 'm' });
    release();
    await r.settled();
    expect(sent).toEqual([
      { inputTokens: 1, estimated: true, model: 'm' },
      { inputTokens: 5, estimated: true, model: 'm' },
      { inputTokens: 100, costUsd: 1, final: true, model: 'm' },
    ]);
  });

  it('an increment with its own cost is not summed with tokens left for Gaffer to price', async () => {
    const { sent, r, release } = gatedReporter();
    r.add({ inputTokens: 1, model: 'm' });
    r.add({ inputTokens: 1000, outputTokens: 50, model: 'm' }); // priced by Gaffer from the table
    r.add({ inputTokens: 10, costUsd: 0.25, model: 'm' }); // the command's own figure
    r.add({ inputTokens: 7, model: 'm' });
    r.add({ inputTokens: 20, costUsd: 0.5, model: 'm' });
    release();
    await r.settled();
    expect(sent).toEqual([
      { inputTokens: 1, model: 'm' },
      { inputTokens: 1007, outputTokens: 50, model: 'm' },
      { inputTokens: 30, costUsd: 0.75, model: 'm' },
    ]);
  });
});
