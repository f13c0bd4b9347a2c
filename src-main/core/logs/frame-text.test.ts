import { describe, expect, it } from 'vitest';
import { agentRequest } from '../../common/protocol';
import { badRequest } from '../hub/wire';
import { scanLogFrameHeader } from './frame-header';
import { readLogFrame } from './frame-text';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function read(text: string, lockFence = 2) {
  const header = scanLogFrameHeader(text);
  expect(header, text).not.toBeNull();
  return readLogFrame({ text, header: header!, subject: 'task:5', attempt: 2, receivedAt: T0, lockFence });
}

/** The message the session's own parse gives a frame (what the parsed path answers). */
function sessionMessage(text: string): string {
  const msg: unknown = JSON.parse(text);
  const r = agentRequest.safeParse(msg);
  expect(r.success).toBe(false);
  return badRequest(msg, r.error!).message;
}

describe('readLogFrame', () => {
  it('turns a frame into the entry the store appends (lines without `at` get the arrival time)', () => {
    const r = read(JSON.stringify({ id: 1, type: 'log', taskId: 5, lines: [{ text: 'a', seq: 1 }, { text: 'b', stream: 'stderr', level: 'error', at: '2026-12-01T09:00:00.000Z', extra: 1 }] }));
    expect(r).toEqual({
      ok: true,
      entry: {
        subject: 'task:5',
        attempt: 2,
        lines: [
          { text: 'a', stream: undefined, level: undefined, seq: 1, at: T0 },
          { text: 'b', stream: 'stderr', level: 'error', seq: undefined, at: Date.parse('2026-12-01T09:00:00.000Z') },
        ],
      },
    });
  });

  it('refuses what the schema refuses, with the message the parsed path gives', () => {
    for (const text of [
      '{"id":1,"type":"log","taskId":5,"lines":[]}',
      '{"id":1,"type":"log","taskId":5,"lines":[{"text":"ok"},{"text":"x","level":"loud"}]}',
      '{"id":1,"type":"log","taskId":5,"lines":[{"text":"x","at":"yesterday"}]}',
      '{"id":1,"type":"log","taskId":5,"lines":[{"text":"x","seq":0}]}',
      '{"id":1,"type":"log","taskId":5,"lines":["just a string"]}',
      '{"id":1,"type":"log","taskId":5,"lines":[{"text":"fine"},{"text":"bad \\ud800"}]}',
      '{"id":1,"type":"log","taskId":5,"lines":[{"text":"fine","\\udc00key":1}]}',
      '{"id":1,"type":"log","taskId":5,"fence":2,"lines":[{"text":"x"}],"fence":"two"}',
    ]) {
      const r = read(text);
      expect(r, text).toEqual({ ok: false, code: 'bad_request', message: sessionMessage(text) });
    }
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"fine"},{"text":"bad \\ud800"}]}')).toMatchObject({ message: expect.stringContaining('lines.1.text') });
  });

  it('takes a well-formed surrogate pair sent as escapes', () => {
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"party \\ud83c\\udf89"}]}')).toMatchObject({ ok: true, entry: { lines: [{ text: 'party 🎉' }] } });
  });

  it('refuses malformed JSON, and a frame whose header changes after the lines', () => {
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}]')).toEqual({ ok: false, code: 'bad_request', message: 'malformed JSON' });
    for (const tail of ['"taskId":6', '"id":2', '"type":"claim"']) {
      const r = read(`{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}],${tail}}`);
      expect(r, tail).toMatchObject({ ok: false, code: 'bad_request', message: expect.stringContaining('repeats a key of its header') });
    }
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}],"runId":"r"}')).toMatchObject({ ok: false, code: 'bad_request', message: 'give exactly one of "taskId" and "runId"' });
    // A repeat with the same value changes nothing.
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}],"taskId":5}')).toMatchObject({ ok: true });
  });

  it('checks a fence the main thread did not read against the lock held (a stale one is not_holder)', () => {
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}],"fence":2}')).toMatchObject({ ok: true });
    expect(read('{"id":1,"type":"log","taskId":5,"lines":[{"text":"x"}],"fence":3}')).toEqual({ ok: false, code: 'not_holder', message: 'fence 3 is stale for task 5 (current 2)' });
    expect(read('{"id":1,"type":"log","taskId":5,"fence":2,"lines":[{"text":"x"}],"fence":1}')).toMatchObject({ ok: false, code: 'not_holder' });
  });

  it('reads a frame from its bytes exactly as the socket would have decoded it (bad bytes as U+FFFD, a byte-order mark kept)', () => {
    const fromBytes = (bytes: Uint8Array, text = Buffer.from(bytes).toString('utf8')) =>
      readLogFrame({ bytes, header: scanLogFrameHeader(text)!, subject: 'task:5', attempt: 2, receivedAt: T0, lockFence: 2 });
    const head = Buffer.from('{"id":1,"type":"log","taskId":5,"lines":[{"text":"caf\u00e9 ');
    const tail = Buffer.from('"}]}');
    // Two bad sequences and a good é: what `Buffer#toString` (the text path) makes of them.
    const bytes = new Uint8Array(Buffer.concat([head, Buffer.from([0xc3, 0xa9, 0x20, 0xff, 0x20, 0xe2, 0x82]), tail]));
    const r = fromBytes(bytes);
    expect(r).toMatchObject({ ok: true, entry: { lines: [{ text: 'café é \ufffd \ufffd' }] } });
    expect(r).toEqual(read(Buffer.from(bytes).toString('utf8')));
    // A leading byte-order mark is not JSON, on either path.
    const bom = new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), head, tail]));
    expect(fromBytes(bom, Buffer.concat([head, tail]).toString('utf8'))).toEqual({ ok: false, code: 'bad_request', message: 'malformed JSON' });
  });
});
