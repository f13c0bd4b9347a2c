/**
 * A searchable IANA time-zone field (combobox): type part of a name ("berl", "new york",
 * "shanghai"), move with ↑/↓, pick with Enter or a click, Esc closes the list. The current
 * offset is shown next to each zone.
 */
import { useId, useMemo, useState, type KeyboardEvent } from 'react';
import { allTimeZones, offsetLabel, searchZones } from '../lib/zones';

export interface ZonePickerProps {
  value: string;
  onChange: (zone: string) => void;
  name?: string;
  invalid?: boolean;
  placeholder?: string;
  /** Allowed empty (e.g. an interval without a zone). */
  allowEmpty?: boolean;
}

export function ZonePicker(p: ZonePickerProps) {
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState<string | null>(null);
  const [active, setActive] = useState(0);
  const listId = useId();
  const text = query ?? p.value;
  const matches = useMemo(() => searchZones(query ?? '', allTimeZones(), 60), [query]);
  const now = Date.now();

  const pick = (z: string) => {
    p.onChange(z);
    setQuery(null);
    setOpen(false);
  };

  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === 'ArrowDown') {
      e.preventDefault();
      setOpen(true);
      setActive((a) => Math.min(matches.length - 1, a + 1));
    } else if (e.key === 'ArrowUp') {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === 'Enter' && open) {
      e.preventDefault();
      const z = matches[active];
      if (z) pick(z);
    } else if (e.key === 'Escape' && open) {
      // Closes the list only: the editor's Esc (cancel) must not fire.
      e.preventDefault();
      e.stopPropagation();
      setOpen(false);
      setQuery(null);
    }
  };

  return (
    <div className="combo">
      <input
        name={p.name}
        role="combobox"
        aria-expanded={open}
        aria-controls={listId}
        aria-autocomplete="list"
        aria-invalid={p.invalid || undefined}
        autoComplete="off"
        spellCheck={false}
        value={text}
        placeholder={p.placeholder ?? 'Search a zone: Berlin, New York, Shanghai…'}
        onFocus={() => setOpen(true)}
        onChange={(e) => {
          setQuery(e.target.value);
          setActive(0);
          setOpen(true);
          if (p.allowEmpty && e.target.value.trim() === '') p.onChange('');
        }}
        onBlur={() => {
          // A typed exact zone name counts even without picking it from the list.
          window.setTimeout(() => {
            if (query !== null) {
              const exact = allTimeZones().find((z) => z.toLowerCase() === query.trim().toLowerCase());
              if (exact) p.onChange(exact);
              else if (query.trim() !== '' || !p.allowEmpty) p.onChange(query.trim());
            }
            setQuery(null);
            setOpen(false);
          }, 120);
        }}
        onKeyDown={onKey}
      />
      {open && matches.length > 0 ? (
        <ul className="combo-list" id={listId} role="listbox" data-testid="zone-options">
          {matches.map((z, i) => (
            <li
              key={z}
              role="option"
              aria-selected={i === active}
              className={`combo-item${i === active ? ' active' : ''}${z === p.value ? ' current' : ''}`}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(z);
              }}
              onMouseEnter={() => setActive(i)}
            >
              <span>{z.replace(/_/g, ' ')}</span>
              <span className="muted small mono">{offsetLabel(now, z)}</span>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
