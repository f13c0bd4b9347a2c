/**
 * A dense table laid out with CSS grid, so the header and the (possibly virtualised) rows share
 * one column template. Small tables render plainly; past `virtualiseAbove` rows they virtualise.
 * Columns marked `showFrom` appear only while the table is at least that wide, and `showBelow`
 * ones only while it is narrower: a narrow window drops secondary columns or shows a compact form
 * (a row menu) instead of clipping the row's actions.
 */
import type { CSSProperties, ReactNode } from 'react';
import { useElementWidth } from '../lib/use-element-width';
import { VirtualList } from './VirtualList';

export interface Column<T> {
  key: string;
  header: ReactNode;
  /** CSS grid track, e.g. "120px", "minmax(160px, 2fr)". */
  width: string;
  render: (row: T) => ReactNode;
  align?: 'left' | 'right' | 'center';
  title?: string;
  /** Shown only when the table is at least this many pixels wide (a secondary column). */
  showFrom?: number;
  /** Shown only while the table is narrower than this (the compact form of a wide column). */
  showBelow?: number;
}

export interface TableProps<T> {
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string | number;
  rowHeight?: number;
  virtualiseAbove?: number;
  /** Height of the scroll area when virtualised. */
  maxHeight?: number | string;
  onRowClick?: (row: T) => void;
  selectedKey?: string | number | null;
  rowTone?: (row: T) => string | undefined;
  empty?: ReactNode;
  testId?: string;
  ariaLabel?: string;
  /**
   * The keyboard cursor of a list driven by useListKeys (lib/list-keys): rows carry their index
   * (`data-list-row`), only the cursor's row is a Tab stop, and a virtualised table scrolls to it.
   * The hook handles Enter and Space then, not the row. Left out: Enter or Space on a row opens it.
   */
  cursor?: number | null;
}

/** The columns for a table `width` px wide (until it is measured: those meant for a wide one). */
export function visibleColumns<T>(columns: Column<T>[], width: number | null): Column<T>[] {
  if (width === null) return columns.filter((c) => c.showBelow === undefined);
  return columns.filter((c) => (c.showFrom === undefined || width >= c.showFrom) && (c.showBelow === undefined || width < c.showBelow));
}

export function Table<T>(p: TableProps<T>) {
  const [measure, width] = useElementWidth<HTMLDivElement>();
  const columns = visibleColumns(p.columns, width);
  const template = columns.map((c) => c.width).join(' ');
  const style = { '--grid-cols': template } as CSSProperties;
  const rowHeight = p.rowHeight ?? 36;
  const keyed = p.cursor !== undefined;
  const row = (r: T, index: number) => {
    const key = p.rowKey(r);
    const tone = p.rowTone?.(r);
    const atCursor = keyed && (p.cursor ?? 0) === index;
    return (
      <div
        className={`trow${p.onRowClick ? ' trow-link' : ''}${p.selectedKey === key ? ' selected' : ''}${tone ? ` row-${tone}` : ''}`}
        style={{ ...style, minHeight: rowHeight }}
        onClick={p.onRowClick ? () => p.onRowClick!(r) : undefined}
        // A clickable row is reachable by keyboard too: Tab to it, Enter or Space opens it.
        tabIndex={keyed ? (atCursor ? 0 : -1) : p.onRowClick ? 0 : undefined}
        data-list-row={keyed ? index : undefined}
        aria-current={keyed && p.cursor === index ? 'true' : undefined}
        onKeyDown={
          p.onRowClick && !keyed
            ? (e) => {
                if (e.target !== e.currentTarget || (e.key !== 'Enter' && e.key !== ' ')) return;
                e.preventDefault();
                p.onRowClick!(r);
              }
            : undefined
        }
        data-row-key={key}
        role="row"
      >
        {columns.map((c) => (
          <div key={c.key} className={`tcell align-${c.align ?? 'left'}`} role="cell">
            {c.render(r)}
          </div>
        ))}
      </div>
    );
  };
  const virtual = p.rows.length > (p.virtualiseAbove ?? 150);
  return (
    <div className="table" role="table" aria-label={p.ariaLabel} data-testid={p.testId} ref={measure}>
      <div className="thead" style={style} role="row">
        {columns.map((c) => (
          <div key={c.key} className={`th align-${c.align ?? 'left'}`} title={c.title} role="columnheader">
            {c.header}
          </div>
        ))}
      </div>
      {p.rows.length === 0 ? (
        // Inside a table only rows may stand: the empty state is the one cell of a row.
        p.empty ? (
          <div role="row" className="tempty">
            <div role="cell">{p.empty}</div>
          </div>
        ) : null
      ) : virtual ? (
        <div style={{ height: p.maxHeight ?? 480 }} className="table-vbody">
          <VirtualList items={p.rows} rowHeight={rowHeight} getKey={(r) => p.rowKey(r)} render={(r, i) => row(r, i)} activeIndex={p.cursor} />
        </div>
      ) : (
        <div className="tbody">
          {p.rows.map((r, i) => (
            <div key={p.rowKey(r)}>{row(r, i)}</div>
          ))}
        </div>
      )}
    </div>
  );
}
