/**
 * Lists driven from the keyboard (Tasks, Inbox, Runs, Jobs, Queues): `j`/`k` or the arrows move,
 * Home/End jump, Enter opens, Space or `x` selects, and a few letters act on the item under the
 * cursor (approve, retry, acknowledge, cancel). The decision is a pure function (listKey), so the
 * keys are testable without a DOM; useListKeys binds it to a view's main list.
 *
 * Rules:
 * 1. Typing in a field, with a modifier held, or with a dialog open, is never a list key.
 * 2. The key after `g` belongs to the "go to a view" chord (`g j` is Jobs), not to the list.
 * 3. Space selects only when the row itself has focus (on a button, Space presses the button).
 */
import { useEffect, useRef, useState } from 'react';

/** The action letters, in the words `?` and the tooltips use. */
export const LIST_ACTION_KEYS = {
  a: 'approve (a held run) or unblock (a blocked task)',
  r: 'retry',
  e: 'acknowledge',
  c: 'cancel',
} as const;
export type ListActionKey = keyof typeof LIST_ACTION_KEYS;

export type ListKey = { kind: 'move'; by: 1 | -1 } | { kind: 'edge'; to: 'first' | 'last' } | { kind: 'open' } | { kind: 'select' } | { kind: 'action'; key: ListActionKey };

export interface ListKeyInput {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  /** The target is a text field, select or contenteditable. */
  inField?: boolean;
  /** A dialog is open. */
  inDialog?: boolean;
  /** The focused element is a list row itself (not a button inside it). */
  onRow?: boolean;
  /** The previous key was `g`, moments ago (rule 2). */
  afterG?: boolean;
}

export function listKey(k: ListKeyInput): ListKey | null {
  if (k.inField || k.inDialog || k.ctrlKey || k.metaKey || k.altKey || k.afterG) return null;
  switch (k.key) {
    case 'j':
    case 'ArrowDown':
      return { kind: 'move', by: 1 };
    case 'k':
    case 'ArrowUp':
      return { kind: 'move', by: -1 };
    case 'Home':
      return { kind: 'edge', to: 'first' };
    case 'End':
      return { kind: 'edge', to: 'last' };
    case 'Enter':
      return k.onRow ? { kind: 'open' } : null;
    case ' ':
      return k.onRow ? { kind: 'select' } : null;
    case 'x':
      return { kind: 'select' };
    default:
      return k.key in LIST_ACTION_KEYS ? { kind: 'action', key: k.key as ListActionKey } : null;
  }
}

/** The next cursor position: moves stay inside the list; the first move lands on the first row. */
export function moveCursor(cursor: number | null, count: number, key: Extract<ListKey, { kind: 'move' | 'edge' }>): number | null {
  if (count === 0) return null;
  if (key.kind === 'edge') return key.to === 'first' ? 0 : count - 1;
  if (cursor === null) return key.by === 1 ? 0 : count - 1;
  return Math.min(count - 1, Math.max(0, cursor + key.by));
}

const isField = (t: EventTarget | null) => t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
const CHORD_MS = 1500;

export interface ListKeysOptions {
  count: number;
  /** The row elements are found by this attribute's value (`data-list-row="<index>"`) under `root`. */
  root: () => HTMLElement | null;
  onOpen?: (index: number) => void;
  onSelect?: (index: number) => void;
  /** What each action letter does to the row under the cursor (a letter left out does nothing). */
  actions?: Partial<Record<ListActionKey, (index: number) => void>>;
}

/**
 * Binds the list keys to a view's main list (one per view). Returns the cursor; rows carry
 * `data-list-row={index}` and get `tabIndex` 0 under the cursor (-1 otherwise): focus moves with it.
 */
export function useListKeys(o: ListKeysOptions): { cursor: number | null; setCursor: (i: number | null) => void } {
  const [cursor, setCursor] = useState<number | null>(null);
  const latest = useRef({ o, cursor });
  latest.current = { o, cursor };
  useEffect(() => {
    let gAt = -Infinity;
    const onKey = (e: KeyboardEvent) => {
      // The chord is followed even through keys another handler took (the view letter after g).
      const now = performance.now();
      const afterG = now - gAt <= CHORD_MS;
      gAt = e.key === 'g' && !isField(e.target) ? now : -Infinity;
      if (e.defaultPrevented) return;
      const { o: opts, cursor: cur } = latest.current;
      const row = e.target instanceof HTMLElement ? e.target.closest<HTMLElement>('[data-list-row]') : null;
      const k = listKey({
        key: e.key,
        ctrlKey: e.ctrlKey,
        metaKey: e.metaKey,
        altKey: e.altKey,
        inField: isField(e.target),
        inDialog: !!document.querySelector('[role="dialog"]'),
        onRow: !!row && row === e.target,
        afterG,
      });
      if (!k) return;
      if (k.kind === 'move' || k.kind === 'edge') {
        const next = moveCursor(cur, opts.count, k);
        if (next === null) return;
        e.preventDefault();
        setCursor(next);
        opts.root()?.querySelector<HTMLElement>(`[data-list-row="${next}"]`)?.focus();
        return;
      }
      const at = row ? Number(row.dataset.listRow) : cur;
      if (at === null || Number.isNaN(at)) return;
      const act = k.kind === 'open' ? opts.onOpen : k.kind === 'select' ? opts.onSelect : opts.actions?.[k.key];
      if (!act) return;
      e.preventDefault();
      act(at);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);
  return { cursor, setCursor };
}
