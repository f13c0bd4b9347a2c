/**
 * Keyboard shortcuts as a pure state machine, so the chords are testable without a DOM.
 *   g d / g q / g e / g i / g j / g r / g w / g c / g a / g s   go to a view
 *   Ctrl/Cmd + 1…9                             go to the n-th view in CONSOLE_VIEWS order (as Electron's Go menu)
 *   /                                          focus the current view's filter
 *   ?                                          show the shortcut list
 *   Ctrl/Cmd + K                               the command palette: views, jobs, tasks, actions
 *   Esc                                        close the open pane / dialog / help
 * Typing in a field never triggers a shortcut (except Esc, and Ctrl/Cmd+digit).
 */
import { LIST_KEYMAPS, LIST_NAMES, type ListName } from '../lib/list-keys';
import { viewForDigit, type ViewId } from '../lib/routes';
import type { RouteDef } from './views';

export interface KeyInput {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  shiftKey?: boolean;
  /** The event target is a text field, select or contenteditable. */
  inField?: boolean;
  /** Time of the key press (ms), to expire a pending `g`. */
  at: number;
}

export type ShortcutAction =
  | { kind: 'navigate'; view: ViewId }
  | { kind: 'focusFilter' }
  | { kind: 'help' }
  | { kind: 'palette' }
  | { kind: 'escape' };

export interface ChordState {
  /** `g` pressed at this time, waiting for the second key. */
  pendingG: number | null;
}

export const CHORD_TIMEOUT_MS = 1500;

export function initialChordState(): ChordState {
  return { pendingG: null };
}

export function handleKey(state: ChordState, k: KeyInput, routes: RouteDef[]): { state: ChordState; action: ShortcutAction | null } {
  if (k.key === 'Escape') return { state: { pendingG: null }, action: { kind: 'escape' } };
  // The command palette, from anywhere (a field too: it is where people press it).
  if ((k.ctrlKey || k.metaKey) && !k.altKey && k.key.toLowerCase() === 'k') return { state: { pendingG: null }, action: { kind: 'palette' } };
  if ((k.ctrlKey || k.metaKey) && !k.altKey && /^[1-9]$/.test(k.key)) {
    const view = viewForDigit(Number(k.key));
    return { state: { pendingG: null }, action: view ? { kind: 'navigate', view } : null };
  }
  if (k.inField || k.ctrlKey || k.metaKey || k.altKey) return { state: { pendingG: null }, action: null };
  if (state.pendingG !== null && k.at - state.pendingG <= CHORD_TIMEOUT_MS) {
    const r = routes.find((x) => x.chord === k.key.toLowerCase());
    return { state: { pendingG: null }, action: r ? { kind: 'navigate', view: r.id } : null };
  }
  if (k.key === 'g' && !k.shiftKey) return { state: { pendingG: k.at }, action: null };
  if (k.key === '/') return { state: { pendingG: null }, action: { kind: 'focusFilter' } };
  if (k.key === '?') return { state: { pendingG: null }, action: { kind: 'help' } };
  return { state: { pendingG: null }, action: null };
}

export function shortcutList(routes: RouteDef[]): Array<{ keys: string[]; what: string }> {
  return [
    ...routes.map((r) => ({ keys: [`g ${r.chord}`, ...digitsFor(r.id).map((d) => `Ctrl/⌘ ${d}`)], what: r.label })),
    { keys: ['/'], what: 'Focus the filter of this view' },
    { keys: ['?'], what: 'Show this list' },
    { keys: ['Ctrl/⌘ K'], what: 'Go to a view, a job, tasks or an action by typing (the command palette)' },
    { keys: ['Esc'], what: 'Close the open pane, dialog or this list' },
    { keys: ['↑', '↓', 'Home', 'End'], what: 'Move through the audit list (the detail pane follows)' },
    { keys: ['j', 'k', '↑', '↓'], what: 'Inbox, Tasks, Role queues, Runs, Jobs: move to the next or previous row' },
    { keys: ['x', 'Space'], what: 'Inbox, Tasks: select the row (for one action over many)' },
    { keys: ['Enter'], what: 'In a list: open the row; in a dialog, confirm (Shift+Enter: a new line)' },
    ...(Object.keys(LIST_KEYMAPS) as ListName[]).flatMap((list) =>
      Object.entries(LIST_KEYMAPS[list]).map(([k, what]) => ({ keys: [k], what: `${LIST_NAMES[list]}: ${what} the row under the cursor` })),
    ),
  ];
}

/** The Ctrl/Cmd digits that open a view. */
export function digitsFor(view: ViewId): number[] {
  const out: number[] = [];
  for (let n = 1; n <= 9; n++) if (viewForDigit(n) === view) out.push(n);
  return out;
}
