// @vitest-environment happy-dom
/** useListKeys in a page: focus follows the cursor, letters act on the row under it, the key after g is the chord's. */
import { cleanup, fireEvent, render, waitFor } from '@testing-library/react';
import { useEffect, useRef, useState } from 'react';
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

/** A windowed list as a virtualiser renders it: only the rows near `top`, which follows the cursor one render late. */
function Windowed({ onRetry, onOpen }: { onRetry: (i: number) => void; onOpen: (i: number) => void }) {
  const ref = useRef<HTMLDivElement>(null);
  const { cursor } = useListKeys({ count: 100, root: () => ref.current, onOpen, actions: { r: onRetry } });
  const [top, setTop] = useState(0);
  useEffect(() => {
    // Scrolled into view after the cursor moved (the virtualiser's scrollToIndex, then its next render).
    if (cursor !== null && (cursor < top || cursor >= top + 5)) requestAnimationFrame(() => setTop(cursor));
  }, [cursor, top]);
  return (
    <div ref={ref}>
      {Array.from({ length: 5 }, (_, k) => top + k).map((i) => (
        <div key={i} data-list-row={i} tabIndex={cursor === i ? 0 : -1} data-testid={`w-${i}`}>
          row {i}
        </div>
      ))}
      <input data-testid="filter" />
    </div>
  );
}

describe('useListKeys on a virtualised list', () => {
  it('End moves to a row not yet rendered: once scrolled there it has focus, and Enter and r act on it', async () => {
    const onRetry = vi.fn();
    const onOpen = vi.fn();
    render(<Windowed onRetry={onRetry} onOpen={onOpen} />);
    fireEvent.keyDown(document.body, { key: 'End' });
    await waitFor(() => expect(document.activeElement?.getAttribute('data-testid')).toBe('w-99'));
    fireEvent.keyDown(document.activeElement!, { key: 'Enter' });
    fireEvent.keyDown(document.activeElement!, { key: 'r' });
    expect(onOpen).toHaveBeenCalledWith(99);
    expect(onRetry).toHaveBeenCalledWith(99);
  });

  it('keys typed in a field or with a dialog open do nothing; a letter the list has no action for does nothing', () => {
    const onRetry = vi.fn();
    const { getByTestId } = render(<Windowed onRetry={onRetry} onOpen={() => {}} />);
    fireEvent.keyDown(document.body, { key: 'j' });
    expect(document.activeElement?.getAttribute('data-testid')).toBe('w-0');
    const field = getByTestId('filter');
    field.focus();
    for (const key of ['j', 'r']) fireEvent.keyDown(field, { key });
    expect(document.activeElement).toBe(field);
    getByTestId('w-0').focus();
    const dialog = document.createElement('div');
    dialog.setAttribute('role', 'dialog');
    document.body.appendChild(dialog);
    fireEvent.keyDown(document.activeElement!, { key: 'r' });
    fireEvent.keyDown(document.activeElement!, { key: 'j' });
    dialog.remove();
    expect(document.activeElement?.getAttribute('data-testid')).toBe('w-0');
    fireEvent.keyDown(document.activeElement!, { key: 'a' });
    expect(onRetry).not.toHaveBeenCalled();
    fireEvent.keyDown(document.activeElement!, { key: 'r' });
    expect(onRetry).toHaveBeenCalledWith(0);
  });

  it('a row focused by a click moves the cursor there: j goes on from it', () => {
    const { getByTestId } = render(<Windowed onRetry={() => {}} onOpen={() => {}} />);
    getByTestId('w-3').focus();
    fireEvent.keyDown(document.activeElement!, { key: 'j' });
    expect(document.activeElement?.getAttribute('data-testid')).toBe('w-4');
  });
});
