import { describe, expect, it } from 'vitest';
import { repeatedLogHeaderKey, scanLogFrameHeader, type LogFrameHeader } from './frame-header';

const sameAs = (msg: Record<string, unknown>, h: LogFrameHeader) =>
  msg.id === h.id && msg.type === 'log' && msg.taskId === h.taskId && msg.runId === h.runId && (h.fence === undefined || msg.fence === h.fence);

const lines = [{ text: 'a "quoted" line \\ with a backslash\\', seq: 1 }, { text: 'second {[', at: '2026-12-01T10:00:00.000Z' }];

describe('scanLogFrameHeader', () => {
  it('reads the header of the SDK frame (header first) and of the Python frame (lines first)', () => {
    const ts = JSON.stringify({ id: 'r7', type: 'log', taskId: 5, fence: 3, lines });
    expect(scanLogFrameHeader(ts)).toEqual({ id: 'r7', taskId: 5, fence: 3 });
    const py = JSON.stringify({ runId: 'run_ab', lines, extra: { nested: ['x', '"'] }, id: 12, type: 'log' });
    expect(scanLogFrameHeader(py)).toEqual({ id: 12, runId: 'run_ab' });
    expect(scanLogFrameHeader(' {"id":-0,"type":"log","taskId":1,"lines":[]} ')).toEqual({ id: -0, taskId: 1 });
  });

  it('leaves every frame it cannot read exactly to the parsed path (null)', () => {
    const frame = (o: Record<string, unknown>) => JSON.stringify({ id: 1, type: 'log', ...o, lines });
    for (const text of [
      JSON.stringify({ id: 1, type: 'claim' }),
      JSON.stringify({ id: 1, type: 'report', taskId: 2, fence: 1, status: 'done', note: '"type":"log"' }),
      '{"id": 1, "type": "log", "taskId": 1, "lines": []}', // spaced: not the exact text looked for
      '{"id":1,"t\\u0079pe":"log","type":"log","taskId":1,"lines":[]}', // an escaped key
      '{"id":1,"id":2,"type":"log","taskId":1,"lines":[]}', // a repeated key before the lines
      frame({ taskId: 1, runId: 'r' }),
      frame({}),
      frame({ taskId: '1' }),
      frame({ taskId: 1.5 }),
      frame({ taskId: 0 }),
      frame({ taskId: 2 ** 53 }),
      frame({ taskId: 1, fence: -1 }),
      frame({ runId: '' }),
      frame({ runId: 'é' }),
      JSON.stringify({ id: 'x'.repeat(101), type: 'log', taskId: 1, lines }),
      JSON.stringify({ id: 'a\nb', type: 'log', taskId: 1, lines }),
      JSON.stringify({ id: true, type: 'log', taskId: 1, lines }),
      '{"id":1,"type":"log","taskId":1,"lines":{}}',
      '{"id":1,"type":"log","taskId":1}',
      '["id",1,"type","log"]',
    ]) {
      expect(scanLogFrameHeader(text), text).toBeNull();
    }
  });

  it('whatever it returns for a JSON frame is what JSON.parse reads for those keys', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const texts = ['plain', 'with "quotes"', 'back\\slash\\', '\\"', 'ünïcødé 🎉', '{"id":9,"type":"log"}', ''];
    for (let k = 0; k < 500; k++) {
      const parts: Array<[string, unknown]> = [
        ['id', rnd(2) ? rnd(1000) : `r${rnd(1000)}`],
        ['type', 'log'],
        [rnd(2) ? 'taskId' : 'runId', rnd(2) ? 1 + rnd(50) : `run_${rnd(99)}`],
        ['lines', Array.from({ length: 1 + rnd(4) }, () => ({ text: texts[rnd(texts.length)], ...(rnd(2) ? { seq: 1 + rnd(9) } : {}) }))],
        ...(rnd(2) ? [['fence', 1 + rnd(9)] as [string, unknown]] : []),
        ...(rnd(2) ? [['note', { deep: [texts[rnd(texts.length)], { a: [] }] }] as [string, unknown]] : []),
      ];
      for (let i = parts.length - 1; i > 0; i--) {
        const j = rnd(i + 1);
        [parts[i], parts[j]] = [parts[j]!, parts[i]!];
      }
      const text = JSON.stringify(Object.fromEntries(parts));
      const h = scanLogFrameHeader(text);
      const msg = JSON.parse(text) as Record<string, unknown>;
      const valid = (typeof msg.taskId === 'number') !== (typeof msg.runId === 'string');
      if (valid) expect(h, text).not.toBeNull();
      if (h) expect(sameAs(msg, h), text).toBe(true);
    }
  });

  it('reads past the lines only while the type, the id or the work are still unknown', () => {
    // Known before the lines: what follows is left to the worker's check (frame-text.ts).
    expect(scanLogFrameHeader('{"id":1,"type":"log","taskId":1,"lines":[{"text":"x"}],"taskId":2,"fence":4}')).toEqual({ id: 1, taskId: 1 });
    expect(scanLogFrameHeader('{"id":1,"type":"log","taskId":1,"lines":["unclosed')).toEqual({ id: 1, taskId: 1 });
    // Not known yet: the lines are skipped and the rest is read.
    expect(scanLogFrameHeader('{"id":1,"type":"log","lines":[{"text":"]}\\\\"}],"taskId":2,"fence":4}')).toEqual({ id: 1, taskId: 2, fence: 4 });
    expect(scanLogFrameHeader('{"type":"log","taskId":1,"lines":[{"text":"x"}],"id":"r1"}')).toEqual({ id: 'r1', taskId: 1 });
    expect(scanLogFrameHeader('{"type":"log","taskId":1,"lines":[{"text":"x"}],"id":"r1","id":"r2"}')).toBeNull();
  });
});

describe('repeatedLogHeaderKey', () => {
  it('finds a header key named twice with different values, however the frame is spaced or escaped', () => {
    const cases: Array<[string, string, unknown]> = [
      ['{"id":1,"type":"log","taskId":1,"taskId":2,"lines":[{"text":"x"}]}', 'taskId', 1],
      ['{ "id": "a", "type": "log", "runId": "r1", "lines": [ {"text": "x"} ], "runId": "r2" }', 'runId', 'a'],
      ['{"id":1,"id":2,"type":"log","taskId":1,"lines":[]}', 'id', 2],
      ['{"id":1,"type":"log","task\\u0049d":1,"taskId":2,"lines":[]}', 'taskId', 1],
      ['{"id":1,"type":"l\\u006fg","taskId":1,"lines":[],"taskId":3}', 'taskId', 1],
      ['{"id":1,"type":"log","type":"claim","taskId":1,"lines":[]}', 'type', 1],
    ];
    for (const [text, key, id] of cases) {
      expect(JSON.parse(text), text).toBeTypeOf('object'); // valid JSON: the parse alone would take it
      expect(repeatedLogHeaderKey(text), text).toEqual({ key, id });
    }
  });

  it('leaves alone a repeat with the same value, other keys, other frames and text that is not an object', () => {
    for (const text of [
      '{"id":1,"type":"log","taskId":1,"lines":[],"taskId":1}',
      '{"id":1,"type":"log","taskId":1,"taskId":1.0,"lines":[]}',
      '{"id":1,"type":"log","taskId":1,"fence":1,"fence":2,"lines":[],"lines":[]}',
      '{"id":1,"type":"report","taskId":1,"taskId":2,"note":"log"}',
      '{"id":1,"type":"log","taskId":1,"lines":[{"text":"{\\"taskId\\":2}"}]}',
      '{"id":1,"type":"claim"}',
      '{"id":1,"type":"log","taskId":1,"taskId":2,"lines":[',
      '["log","log"]',
      '{}',
    ]) {
      expect(repeatedLogHeaderKey(text), text).toBeUndefined();
    }
  });
});
