import { describe, expect, it } from 'vitest';
import { listKey, moveCursor } from './list-keys';

describe('list keys', () => {
  it('moves with j/k and the arrows, opens with Enter and selects with Space only on a row, acts with letters', () => {
    expect(listKey({ key: 'j' })).toEqual({ kind: 'move', by: 1 });
    expect(listKey({ key: 'ArrowUp' })).toEqual({ kind: 'move', by: -1 });
    expect(listKey({ key: 'End' })).toEqual({ kind: 'edge', to: 'last' });
    expect(listKey({ key: 'Enter', onRow: true })).toEqual({ kind: 'open' });
    expect(listKey({ key: 'Enter' })).toBeNull(); // on a button: the button's own Enter
    expect(listKey({ key: ' ', onRow: true })).toEqual({ kind: 'select' });
    expect(listKey({ key: ' ' })).toBeNull();
    expect(listKey({ key: 'x' })).toEqual({ kind: 'select' });
    expect(listKey({ key: 'a' })).toEqual({ kind: 'action', key: 'a' });
    expect(listKey({ key: 'e' })).toEqual({ kind: 'action', key: 'e' });
    expect(listKey({ key: 'q' })).toBeNull();
  });

  it('is never a list key while typing, with a modifier, in a dialog, or right after g (the go-to chord)', () => {
    for (const extra of [{ inField: true }, { ctrlKey: true }, { metaKey: true }, { altKey: true }, { inDialog: true }, { afterG: true }]) {
      expect(listKey({ key: 'j', ...extra })).toBeNull();
      expect(listKey({ key: 'a', ...extra })).toBeNull();
    }
  });

  it('each list has its own action letters; j, k, x and g are never one', () => {
    expect(listKey({ key: 't' }, ['t', 'p'])).toEqual({ kind: 'action', key: 't' });
    expect(listKey({ key: 'a' }, ['t', 'p'])).toBeNull();
    expect(listKey({ key: 'j' }, ['j'])).toEqual({ kind: 'move', by: 1 });
    expect(listKey({ key: 'g' }, ['g'])).toBeNull();
  });

  it('keeps the cursor inside the list; the first move lands on an end', () => {
    expect(moveCursor(null, 5, { kind: 'move', by: 1 })).toBe(0);
    expect(moveCursor(null, 5, { kind: 'move', by: -1 })).toBe(4);
    expect(moveCursor(4, 5, { kind: 'move', by: 1 })).toBe(4);
    expect(moveCursor(0, 5, { kind: 'move', by: -1 })).toBe(0);
    expect(moveCursor(2, 5, { kind: 'edge', to: 'first' })).toBe(0);
    expect(moveCursor(null, 0, { kind: 'move', by: 1 })).toBeNull();
  });
});
