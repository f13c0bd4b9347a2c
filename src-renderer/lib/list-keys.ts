/**
 * Lists driven from the keyboard (Tasks, Inbox, Runs, Jobs, Queues): `j`/`k` or the arrows move,
 * Home/End jump, Enter opens, Space or `x` selects, and a few letters act on the item under the
 * cursor (approve, retry, acknowledge, cancel, trigger, pause). The decision is a pure function
 * (listKey), so the keys are testable without a DOM; useListKeys binds it to a view's main list.
 * Every list's letters live in one table (LIST_KEYMAPS): the keys, the `?` list and the buttons'
 * tooltips read the same words.
 *
 * Rules:
 * 1. Typing in a field, with a modifier held, or with a dialog open, is never a list key.
 * 2. The key after `g` belongs to the "go to a view" chord (`g j` is Jobs), not to the list.
 * 3. Space selects only when the row itself has focus (on a button, Space presses the button).
 * 4. The movement letters (j, k, x) and g are never action letters.
 */
import { useEffect, useRef, useState } from 'react';

/** Each list's action letters, in the words `?` and the tooltips use. */
export const LIST_KEYMAPS = {
  inbox: { a: 'approve (a held run) or unblock (a blocked task)', r: 'retry', e: 'acknowledge', c: 'cancel' },
  tasks: { a: 'unblock (a blocked task)', r: 'retry (a failed task)', c: 'cancel' },
  queues: { a: 'unblock (a blocked task)', r: 'retry (a failed task)', c: 'cancel' },
  runs: { a: 'approve (a held run)', r: 'retry (a failed run)' },
  jobs: { t: 'trigger now', p: 'pause or resume' },
} as const satisfies Record<string, Record<string, string>>;
export type ListName = keyof typeof LIST_KEYMAPS;
export const LIST_NAMES: Record<ListName, string> = { inbox: 'Inbox', tasks: 'Tasks', queues: 'Role queues', runs: 'Runs', jobs: 'Jobs' };

/** The Inbox's letters (the first list that had them). */
export const LIST_ACTION_KEYS = LIST_KEYMAPS.inbox;
export type ListActionKey = string;

/** A button's tooltip naming its key: "Retry the task (key r)". */
export function withKey(title: string, key: string): string {
  return `${title} (key ${key})`;
}

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

const RESERVED = new Set(['j', 'k', 'x', 'g']);

/** The list key `k` is, given the list's action letters (default: the Inbox's). */
export function listKey(k: ListKeyInput, actionKeys: readonly string[] = Object.keys(LIST_ACTION_KEYS)): ListKey | null {
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
      return actionKeys.includes(k.key) && !RESERVED.has(k.key) ? { kind: 'action', key: k.key } : null;
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
  /** What each action letter does to the row under the cursor (a letter left out is not a key here). */
  actions?: Partial<Record<ListActionKey, (index: number) => void>>;
}

/** Frames to wait for a row a virtualised list renders only once it has scrolled to it. */
const FOCUS_FRAMES = 20;

/**
 * Binds the list keys to a view's main list (one per view). Returns the cursor; rows carry
 * `data-list-row={index}` and get `tabIndex` 0 under the cursor (-1 otherwise): focus moves with it.
 * A virtualised list renders the cursor's row once it has scrolled there (Table and VirtualList
 * scroll to the cursor): focus follows it as soon as it is in the page. A row focused otherwise (a
 * click, Tab) moves the cursor there, so `j` goes on from what the operator last touched.
 */
export function useListKeys(o: ListKeysOptions): { cursor: number | null; setCursor: (i: number | null) => void } {
  const [rawCursor, setCursor] = useState<number | null>(null);
  // The list may shrink under the cursor (a filter, an item acted on): it stays on the last row.
  const cursor = rawCursor === null || o.count === 0 ? null : Math.min(rawCursor, o.count - 1);
  const latest = useRef({ o, cursor });
  latest.current = { o, cursor };
  useEffect(() => {
    let gAt = -Infinity;
    let frame = 0;
    const rowIn = (t: EventTarget | null): HTMLElement | null => {
      const row = t instanceof HTMLElement ? t.closest<HTMLElement>('[data-list-row]') : null;
      return row && latest.current.o.root()?.contains(row) ? row : null;
    };
    const focusRow = (i: number, frames: number) => {
      cancelAnimationFrame(frame);
      const el = latest.current.o.root()?.querySelector<HTMLElement>(`[data-list-row="${i}"]`);
      if (el) el.focus({ preventScroll: false });
      else if (frames > 0) frame = requestAnimationFrame(() => focusRow(i, frames - 1));
    };
    const onKey = (e: KeyboardEvent) => {
      // The chord is followed even through keys another handler took (the view letter after g).
      const now = performance.now();
      const afterG = now - gAt <= CHORD_MS;
      gAt = e.key === 'g' && !isField(e.target) ? now : -Infinity;
      if (e.defaultPrevented) return;
      const { o: opts, cursor: cur } = latest.current;
      const row = rowIn(e.target);
      const k = listKey(
        {
          key: e.key,
          ctrlKey: e.ctrlKey,
          metaKey: e.metaKey,
          altKey: e.altKey,
          inField: isField(e.target),
          inDialog: !!document.querySelector('[role="dialog"]'),
          onRow: !!row && row === e.target,
          afterG,
        },
        Object.keys(opts.actions ?? {}),
      );
      if (!k) return;
      if (k.kind === 'move' || k.kind === 'edge') {
        // From the row that has focus (a click put it there), else from the cursor.
        const next = moveCursor(row ? Number(row.dataset.listRow) : cur, opts.count, k);
        if (next === null) return;
        e.preventDefault();
        setCursor(next);
        focusRow(next, FOCUS_FRAMES);
        return;
      }
      const at = row ? Number(row.dataset.listRow) : cur;
      if (at === null || Number.isNaN(at)) return;
      const act = k.kind === 'open' ? opts.onOpen : k.kind === 'select' ? opts.onSelect : opts.actions?.[k.key];
      if (!act) return;
      e.preventDefault();
      act(at);
    };
    const onFocus = (e: FocusEvent) => {
      const row = rowIn(e.target);
      if (row && row === e.target) setCursor(Number(row.dataset.listRow));
    };
    window.addEventListener('keydown', onKey);
    window.addEventListener('focusin', onFocus);
    return () => {
      cancelAnimationFrame(frame);
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('focusin', onFocus);
    };
  }, []);
  return { cursor, setCursor };
}
