// @vitest-environment happy-dom
/** Dialogs open on their first field (not the ×), Enter in the reason confirms, Esc closes, focus returns. */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ReasonDialog } from './Dialog';

afterEach(cleanup);

describe('ReasonDialog from the keyboard', () => {
  it('starts on the reason, confirms with Enter, closes with Esc and gives focus back', async () => {
    const opener = document.createElement('button');
    document.body.appendChild(opener);
    opener.focus();
    const onConfirm = vi.fn(() => Promise.resolve());
    const onClose = vi.fn();
    const { unmount } = render(<ReasonDialog title="Approve the run" confirmLabel="Approve" onConfirm={onConfirm} onClose={onClose} />);
    const reason = screen.getByRole('textbox');
    expect(document.activeElement).toBe(reason);
    fireEvent.change(reason, { target: { value: 'yes, refund' } });
    fireEvent.keyDown(reason, { key: 'Enter' });
    await vi.waitFor(() => expect(onConfirm).toHaveBeenCalledWith('yes, refund'));
    fireEvent.keyDown(window, { key: 'Escape' });
    expect(onClose).toHaveBeenCalled();
    unmount();
    expect(document.activeElement).toBe(opener);
    opener.remove();
  });
});
