import { describe, expect, it } from 'vitest';
import type { LogResult } from '../common/protocol';
import { isWellFormedText } from '../common/text';
import { ConnectionLostError, GafferRequestError } from './errors';
import { LogOutbox } from './log-outbox';

type Line = { seq: number; text: string; stream?: string; level?: string; kind?: string; data?: Record<string, unknown> };

/** A server that stores each seq once, like the real one; `lose` drops the reply of a stored frame. */
function fakeServer() {
  const stored: Line[] = [];
  let lastSeq = 0;
  const frames: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const s = {
    stored,
    frames,
    get maxInFlight() {
      return maxInFlight;
    },
    lose: new Set<number>(),
    refuse: new Map<number, GafferRequestError>(),
    async send(lines: Line[]): Promise<LogResult> {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await new Promise((r) => setImmediate(r));
      inFlight--;
      const n = frames.push(lines.length);
      const refusal = s.refuse.get(n);
      if (refusal) throw refusal;
      let dup = 0;
      for (const l of lines) {
        if (l.seq <= lastSeq) dup++;
        else {
          stored.push(l);
          lastSeq = l.seq;
        }
      }
      if (s.lose.has(n)) throw new ConnectionLostError('socket closed');
      return { accepted: lines.length, stored: lines.length - dup, duplicates: dup, dropped: 0, truncated: false, lastSeq };
    },
  };
  return s;
}

describe('LogOutbox', () => {
  it('sends a line\'s kind and data (PROTOCOL §16); data the server would refuse is left out, the line kept', async () => {
    const srv = fakeServer();
    const box = new LogOutbox((l) => srv.send(l), { lingerMs: 1 });
    void box.write('tool Bash: ls', { kind: 'tool_call', data: { name: 'Bash', input: { command: 'ls' } } });
    void box.write('huge', { kind: 'tool_result', data: { output: 'x'.repeat(70 * 1024) } });
    await box.flush();
    expect(srv.stored.map((l) => [l.text, l.kind, l.data])).toEqual([
      ['tool Bash: ls', 'tool_call', { name: 'Bash', input: { command: 'ls' } }],
      ['huge', 'tool_result', undefined],
    ]);
  });

  it('batches lines into frames, one in flight, and flush resolves once all are acknowledged', async () => {
    const srv = fakeServer();
    const box = new LogOutbox((l) => srv.send(l), { maxFrameLines: 100, lingerMs: 1 });
    for (let i = 1; i <= 1050; i++) void box.write(`line ${i}`, i % 2 ? {} : { stream: 'stderr', level: 'warn' });
    await box.flush();
    expect(srv.stored.map((l) => l.seq)).toEqual(Array.from({ length: 1050 }, (_, i) => i + 1));
    expect(srv.stored[1]).toMatchObject({ text: 'line 2', stream: 'stderr', level: 'warn' });
    expect(srv.stored[0]).not.toHaveProperty('stream'); // defaults are not sent
    expect(Math.max(...srv.frames)).toBeLessThanOrEqual(100);
    expect(srv.maxInFlight).toBe(1);
    expect(box.acknowledged).toBe(1050);
  });

  it('keeps every frame within maxFrameBytes, for plain text and for text JSON escapes or widens', async () => {
    const frames: string[] = [];
    let lastSeq = 0;
    const box = new LogOutbox(
      async (lines) => {
        frames.push(JSON.stringify({ id: 'r1', type: 'log', taskId: 1, fence: 1, lines }));
        lastSeq = lines[lines.length - 1]!.seq;
        return { accepted: lines.length, stored: lines.length, duplicates: 0, dropped: 0, truncated: false, lastSeq };
      },
      { maxFrameBytes: 8 * 1024, maxFrameLines: 10_000, lingerMs: 1 },
    );
    const texts = ['plain ascii text', 'quotes " and \\ backslashes', 'tabs\tand\u0001controls', 'ünïcødé 🎉 wide', '\u007f delete', '\u0001'.repeat(60), '🎉'.repeat(40)];
    for (let i = 0; i < 2000; i++) void box.write(`${texts[i % texts.length]!} ${i}`);
    await box.flush();
    expect(frames.length).toBeGreaterThan(10);
    // The frame's own fields (id, type, taskId, fence) stay well under the 64 bytes counted per line.
    for (const f of frames) expect(Buffer.byteLength(f)).toBeLessThanOrEqual(8 * 1024);
    expect(frames.flatMap((f) => (JSON.parse(f) as { lines: Line[] }).lines.map((l) => l.seq))).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
  });

  it('resends after lost replies and refusals without storing a line twice or losing one', async () => {
    const srv = fakeServer();
    srv.lose.add(2).add(3);
    srv.refuse.set(5, new GafferRequestError('rate_limited', 429, 'behind'));
    const box = new LogOutbox((l) => srv.send(l), { maxFrameLines: 10, lingerMs: 1 });
    for (let i = 1; i <= 95; i++) void box.write(`l${i}`);
    await box.flush();
    expect(srv.stored.map((l) => l.text)).toEqual(Array.from({ length: 95 }, (_, i) => `l${i + 1}`));
  });

  it('keeps memory bounded: awaiting writes slow down to the server, others are dropped and counted', async () => {
    const srv = fakeServer();
    const box = new LogOutbox((l) => srv.send(l), { maxFrameLines: 500, highWaterLines: 2000, maxBufferedLines: 5000, lingerMs: 1 });
    let peak = 0;
    for (let i = 1; i <= 50_000; i++) {
      await box.write(`awaited ${i}`);
      peak = Math.max(peak, box.waiting);
    }
    await box.flush();
    expect(peak).toBeLessThanOrEqual(2000);
    expect(srv.stored).toHaveLength(50_000);

    // A handler that never awaits: the buffer stops at its cap and one line counts the rest.
    const srv2 = fakeServer();
    const box2 = new LogOutbox((l) => srv2.send(l), { maxFrameLines: 500, highWaterLines: 2000, maxBufferedLines: 5000, lingerMs: 1 });
    for (let i = 1; i <= 20_000; i++) void box2.write(`burst ${i}`);
    expect(box2.waiting).toBe(5000);
    await box2.flush();
    void box2.write('after the burst');
    await box2.flush();
    const texts = srv2.stored.map((l) => l.text);
    expect(texts).toHaveLength(5002);
    expect(texts[5000]).toBe('[gaffer sdk] 15000 line(s) dropped: they were logged faster than they could be sent');
    expect(texts[5001]).toBe('after the burst');
  });

  it('stops and discards when the work is no longer ours, and cleans unstorable text', async () => {
    const srv = fakeServer();
    srv.refuse.set(1, new GafferRequestError('not_holder', 409, 'lock lost'));
    const box = new LogOutbox((l) => srv.send(l), { lingerMs: 1 });
    void box.write('one');
    await box.flush();
    expect(box.stoppedReason).toContain('not_holder');
    await box.write('ignored');
    expect(box.waiting).toBe(0);

    const srv2 = fakeServer();
    const box2 = new LogOutbox((l) => srv2.send(l), { lingerMs: 1, maxLineChars: 10 });
    void box2.write('bad \ud800 end');
    void box2.write('x'.repeat(25));
    await box2.flush();
    expect(srv2.stored.map((l) => l.text)).toEqual(['bad \ufffd end', `${'x'.repeat(10)} […cut by the SDK: 25 characters in all]`]);
  });

  it('cuts a long line on a character boundary (half an emoji would make Gaffer refuse the whole frame)', async () => {
    const srv = fakeServer();
    const box = new LogOutbox((l) => srv.send(l), { lingerMs: 1, maxLineChars: 10 });
    void box.write(`${'x'.repeat(9)}\u{1F600}${'y'.repeat(10)}`);
    await box.flush();
    expect(srv.stored.map((l) => l.text)).toEqual([`${'x'.repeat(9)} […cut by the SDK: 21 characters in all]`]);
    expect(srv.stored.every((l) => isWellFormedText(l.text))).toBe(true);
  });
});
