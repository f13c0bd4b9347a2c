/**
 * The command palette (Ctrl/⌘+K): views, jobs, tasks and actions found by what is typed. Pure:
 * what to offer for a query, in order; the component (CommandPalette.tsx) shows and runs them.
 */
import type { ViewId } from '../lib/routes';
import type { RouteDef } from './views';

export interface PaletteItem {
  id: string;
  kind: 'view' | 'job' | 'task' | 'action';
  label: string;
  hint: string;
  /** Where it goes (view, param, query), or `help` for the key list. */
  to: { view: ViewId; param?: string | null; query?: Record<string, string> } | 'help';
}

const MAX_ITEMS = 12;

/** Every word of the query appears in the text (any case). */
function matches(text: string, words: string[]): boolean {
  const t = text.toLowerCase();
  return words.every((w) => t.includes(w));
}

export function paletteItems(query: string, routes: RouteDef[], jobs: ReadonlyArray<{ id: string; name: string }>): PaletteItem[] {
  const q = query.trim();
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  const all: PaletteItem[] = [
    ...routes.map((r): PaletteItem => ({ id: `view:${r.id}`, kind: 'view', label: r.label, hint: `view · g ${r.chord}`, to: { view: r.id } })),
    ...jobs.map((j): PaletteItem => ({ id: `job:${j.id}`, kind: 'job', label: j.name, hint: 'job · open its editor', to: { view: 'jobs', param: j.id } })),
    ...jobs.map((j): PaletteItem => ({ id: `runs:${j.id}`, kind: 'job', label: `Runs of ${j.name}`, hint: 'job · its slot ledger', to: { view: 'runs', param: j.id } })),
    ...jobs.map((j): PaletteItem => ({ id: `why:${j.id}`, kind: 'action', label: `Why didn’t ${j.name} run?`, hint: 'action', to: { view: 'why', param: j.id } })),
    { id: 'action:help', kind: 'action', label: 'Keyboard shortcuts', hint: 'action · ?', to: 'help' },
    { id: 'action:inbox-open', kind: 'action', label: 'What needs me (open inbox items)', hint: 'action', to: { view: 'inbox' } },
  ];
  const found = words.length ? all.filter((i) => matches(`${i.label} ${i.kind}`, words)) : all.filter((i) => i.kind === 'view' || i.kind === 'action');
  // Tasks are found by the server (title, payload, id): the last entry searches them.
  const tasks: PaletteItem[] = q ? [{ id: `tasks:${q}`, kind: 'task', label: `Find tasks matching “${q}”`, hint: 'tasks · title, payload or #id', to: { view: 'tasks', query: { q } } }] : [];
  return [...found.slice(0, MAX_ITEMS - tasks.length), ...tasks];
}
