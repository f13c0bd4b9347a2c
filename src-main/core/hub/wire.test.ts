import { describe, expect, it } from 'vitest';
import { peekId } from './wire';

const peek = (text: string) => peekId(new TextEncoder().encode(text));

describe('peekId (the id of a frame too large to parse)', () => {
  it('finds the top-level id wherever it is, never one nested in a value', () => {
    expect(peek('{"id":"big-1","type":"report","note":"x"}')).toBe('big-1');
    expect(peek(' { "type" : "report" , "output" : {"id":"inner","list":[{"id":2},"}",["]"]]} , "id" : 42 } ')).toBe(42);
    expect(peek('{"note":"a \\"quoted\\" \\\\ {brace","id":-7,"x":1}')).toBe(-7);
    expect(peek('{"payload":[1,2,{"a":"]}"}],"n":null,"t":true,"id":"é-ü"}')).toBe('é-ü');
    expect(peek('{"id":"\\u0041B"}')).toBe('AB');
  });

  it('is null when there is no usable id or the frame is not a well-formed object', () => {
    for (const text of [
      '',
      '[{"id":1}]',
      '"id"',
      '{"type":"claim"}',
      '{"id":{"x":1}}',
      '{"id":1.5}',
      '{"id":""}',
      `{"id":"${'x'.repeat(101)}"}`,
      '{"note":"unterminated, "id": 3',
      '{"a" 1, "id": 2}',
      '{"a":1 "id": 2}',
      'x'.repeat(1000),
    ]) {
      expect(peek(text), text.slice(0, 40)).toBeNull();
    }
  });
});
