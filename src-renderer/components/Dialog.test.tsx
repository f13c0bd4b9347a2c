// @vitest-environment happy-dom
/** Dialogs open on their first field (not the ×), Enter in the reason confirms, Esc closes, focus returns. */
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Dialog, ReasonDialog } from './Dialog';

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

describe('a dialog that has just closed', () => {
  it('does not swallow the Esc that reaches the page before React removed its listener', async () => {
    // Outside act() a close is rendered like one after a server reply: the dialog leaves the page at
    // once, its effect's cleanup runs later. An Esc in between belongs to the page (it closes the pane).
    const prevAct = (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT;
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = false;
    const { createRoot } = await import('react-dom/client');
    const host = document.createElement('div');
    document.body.appendChild(host);
    const root = createRoot(host);
    const onClose = vi.fn();
    root.render(
      <Dialog title="Cancel the task" onClose={onClose} testId="d">
        <p>Why?</p>
      </Dialog>,
    );
    await vi.waitFor(() => expect(host.querySelector('[data-testid="d"]')).not.toBeNull());
    await new Promise((r) => setTimeout(r, 20)); // its effect (the Esc listener) is in place
    const pageSaw: string[] = [];
    const onPage = (e: KeyboardEvent) => pageSaw.push(e.key);
    window.addEventListener('keydown', onPage);
    const pressedWhenGone = new Promise<void>((resolve) => {
      new MutationObserver((_, obs) => {
        if (host.querySelector('[data-testid="d"]')) return;
        obs.disconnect();
        window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' }));
        resolve();
      }).observe(host, { childList: true, subtree: true });
    });
    root.render(null);
    await pressedWhenGone;
    window.removeEventListener('keydown', onPage);
    root.unmount();
    host.remove();
    (globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = prevAct;
    expect(pageSaw).toEqual(['Escape']);
    expect(onClose).not.toHaveBeenCalled();
  });
});
