/** The job editor's keys: Ctrl/Cmd+S saves; Esc leaves (the leave guard asks first when there are unsaved changes). */
import { useEffect, useRef } from 'react';
import { navigate } from '../../lib/navigation';

export function useEditorKeys(save: () => Promise<void>): void {
  const saveRef = useRef(save);
  saveRef.current = save;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && !e.altKey && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (!document.querySelector('[role="dialog"]')) void saveRef.current();
        return;
      }
      if (e.key !== 'Escape' || e.defaultPrevented || document.querySelector('[role="dialog"]')) return;
      navigate('jobs');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
}
