import { describe, expect, it } from 'vitest';
import { ansiPlain, ansiSegments } from './ansi';

describe('ansiSegments', () => {
  it('keeps plain text as one segment', () => {
    expect(ansiSegments('hello <b>')).toEqual([{ text: 'hello <b>', classes: [] }]);
  });
  it('turns palette, 256-colour and true-colour codes into classes and colours', () => {
    const segs = ansiSegments('\x1b[31mred\x1b[0m plain \x1b[1;38;2;10;20;30mtc\x1b[0m \x1b[38;5;196mx\x1b[0m \x1b[38;5;9my\x1b[0m\x1b[42mbg');
    expect(segs).toEqual([
      { text: 'red', classes: ['ansi-red-fg'] },
      { text: ' plain ', classes: [] },
      { text: 'tc', classes: ['ansi-bold'], color: 'rgb(10, 20, 30)' },
      { text: ' ', classes: [] },
      { text: 'x', classes: [], color: 'rgb(255, 0, 0)' },
      { text: ' ', classes: [] },
      { text: 'y', classes: ['ansi-bright-red-fg'] },
      { text: 'bg', classes: ['ansi-green-bg'] },
    ]);
  });
  it('drops cursor codes and gives the plain text', () => {
    expect(ansiPlain('\x1b[2K\x1b[32mok\x1b[0m')).toBe('ok');
  });
});
