/** Ctrl/⌘+K: type to find a view, a job, tasks or an action; ↑/↓ choose, Enter goes, Esc closes. */
import { useMemo, useState, type KeyboardEvent } from 'react';
import { Dialog } from '../components/Dialog';
import { navigate } from '../lib/navigation';
import { useConsole, useWatch } from '../store/react';
import { paletteItems, type PaletteItem } from './palette';
import { ROUTES } from './views';

export function CommandPalette({ onClose, onHelp }: { onClose: () => void; onHelp: () => void }) {
  useWatch('jobs');
  const jobs = useConsole((s) => s.jobs.list.data);
  const [query, setQuery] = useState('');
  const [at, setAt] = useState(0);
  const items = useMemo(() => paletteItems(query, ROUTES, jobs ?? []), [query, jobs]);
  const run = (item: PaletteItem | undefined) => {
    if (!item) return;
    onClose();
    if (item.to === 'help') onHelp();
    else navigate(item.to.view, item.to.param ?? null, item.to.query ?? {});
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      setAt((i) => (items.length ? (i + (e.key === 'ArrowDown' ? 1 : -1) + items.length) % items.length : 0));
    } else if (e.key === 'Enter') {
      e.preventDefault();
      run(items[at]);
    }
  };
  const listId = 'palette-list';
  return (
    <Dialog title="Go to…" onClose={onClose} testId="command-palette">
      <input
        type="text"
        role="combobox"
        aria-expanded="true"
        aria-controls={listId}
        aria-activedescendant={items[at] ? `palette-${at}` : undefined}
        aria-label="A view, a job, tasks or an action"
        placeholder="A view, a job, tasks or an action"
        value={query}
        onChange={(e) => {
          setQuery(e.target.value);
          setAt(0);
        }}
        onKeyDown={onKey}
        data-autofocus
        className="palette-input"
      />
      <ul id={listId} role="listbox" className="palette-list" aria-label="Matches">
        {items.map((item, i) => (
          <li key={item.id} id={`palette-${i}`} role="option" aria-selected={i === at} className={`palette-item${i === at ? ' on' : ''}`} onMouseEnter={() => setAt(i)} onClick={() => run(item)}>
            <span>{item.label}</span> <span className="small muted">{item.hint}</span>
          </li>
        ))}
        {items.length === 0 ? <li className="muted small">Nothing matches.</li> : null}
      </ul>
    </Dialog>
  );
}
