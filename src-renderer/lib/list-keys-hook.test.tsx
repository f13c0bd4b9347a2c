// @vitest-environment happy-dom
/** useListKeys in a page: focus follows the cursor, letters act on the row under it, the key after g is the chord's. */
import { cleanup, fireEvent, render } from '@testing-library/react';
import { useRef } from 'react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useListKeys } from './list-keys';

afterEach(cleanup);

function List({ onApprove }: { onApprove: (i: number) => void }) {
  const ref = useRef<HTMLUListElement>(null);
  const { cursor } = useListKeys({ count: 4, root: () => ref.current, actions: { a: onApprove } });
  return (
    <ul ref={ref}>
      {[0, 1, 2, 3].map((i) => (
        <li key={i} data-list-row={i} tabIndex={cursor === i ? 0 : -1} data-testid={`row-${i}`}>
          item {i}
        </li>
      ))}
    </ul>
  );
}

describe('useListKeys', () => {
  it('g then a view letter is the chord (even when another handler took it); Home, j, j, j reach the 4th row; a acts on it', () => {
    const onApprove = vi.fn();
    render(<List onApprove={onApprove} />);
    const press = (key: string) => fireEvent.keyDown(document.activeElement ?? document.body, { key });
    // The view letter after g may be taken by the app's chord handler (default prevented): still the chord's.
    const chord = (e: KeyboardEvent) => e.key === 'b' && e.preventDefault();
    window.addEventListener('keydown', chord, true);
    for (const key of ['g', 'b', 'Home', 'j', 'j', 'j']) press(key);
    window.removeEventListener('keydown', chord, true);
    expect(document.activeElement?.getAttribute('data-testid')).toBe('row-3');
    press('a');
    expect(onApprove).toHaveBeenCalledWith(3);
  });
});
