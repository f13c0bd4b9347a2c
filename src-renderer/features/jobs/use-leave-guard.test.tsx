// @vitest-environment happy-dom
import { act, renderHook } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { navigate } from '../../lib/navigation';
import { useEditorKeys } from './use-editor-keys';
import { useLeaveGuard } from './use-leave-guard';

beforeEach(() => {
  window.location.hash = '#/jobs/edit/job_1';
});
afterEach(() => {
  document.body.innerHTML = '';
});

describe('useLeaveGuard', () => {
  it('with unsaved changes, in-app navigation waits for the operator: stay forgets it, leave goes', () => {
    const { result } = renderHook(() => useLeaveGuard(true, 'browser'));
    act(() => navigate('jobs'));
    expect(window.location.hash).toBe('#/jobs/edit/job_1');
    expect(result.current.pending).toBe('#/jobs');
    act(() => result.current.stay());
    expect(result.current.pending).toBeNull();
    act(() => navigate('runs'));
    act(() => result.current.leave());
    expect(window.location.hash).toBe('#/runs');
  });

  it('a rail link is stopped and asked about; with nothing unsaved, or after release, it passes', () => {
    const link = document.body.appendChild(Object.assign(document.createElement('a'), { href: '#/inbox' }));
    const { result, rerender } = renderHook(({ dirty }) => useLeaveGuard(dirty, 'electron'), { initialProps: { dirty: true } });
    const click = () => link.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, button: 0 }));
    let allowed = true;
    act(() => {
      allowed = click();
    });
    expect(allowed).toBe(false);
    expect(result.current.pending).toBe('#/inbox');
    rerender({ dirty: false });
    act(() => {
      allowed = click();
    });
    expect(allowed).toBe(true);
    rerender({ dirty: true });
    act(() => result.current.release());
    act(() => navigate('jobs'));
    expect(window.location.hash).toBe('#/jobs');
  });
});

describe('useEditorKeys', () => {
  it('Ctrl/Cmd+S saves (not under a dialog); Esc leaves for the list', () => {
    let saves = 0;
    renderHook(() => useEditorKeys(async () => void saves++));
    const key = (init: KeyboardEventInit) => act(() => void window.dispatchEvent(new KeyboardEvent('keydown', { cancelable: true, ...init })));
    key({ key: 's', ctrlKey: true });
    key({ key: 'S', metaKey: true });
    expect(saves).toBe(2);
    const dialog = document.body.appendChild(Object.assign(document.createElement('div'), { role: 'dialog' }));
    key({ key: 's', ctrlKey: true });
    key({ key: 'Escape' });
    expect(saves).toBe(2);
    expect(window.location.hash).toBe('#/jobs/edit/job_1');
    dialog.remove();
    key({ key: 'Escape' });
    expect(window.location.hash).toBe('#/jobs');
  });
});
