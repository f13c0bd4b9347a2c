// @vitest-environment happy-dom
/** Table rows under the list keys (lib/list-keys): indexed, one Tab stop at the cursor, Enter and Space left to the hook. */
import { cleanup, fireEvent, render } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Table, type Column } from './Table';

afterEach(cleanup);

const columns: Column<{ id: number }>[] = [{ key: 'id', header: 'Id', width: '1fr', render: (r) => `#${r.id}` }];
const rows = [{ id: 7 }, { id: 8 }, { id: 9 }];

describe('Table', () => {
  it('with a cursor: rows carry their index, only the cursor row is a Tab stop, and the row leaves Enter and Space to the list keys', () => {
    const onRowClick = vi.fn();
    const { container } = render(<Table columns={columns} rows={rows} rowKey={(r) => r.id} onRowClick={onRowClick} cursor={1} />);
    const trs = [...container.querySelectorAll<HTMLElement>('.trow[data-row-key]')];
    expect(trs.map((r) => [r.dataset.listRow, r.tabIndex, r.getAttribute('aria-current')])).toEqual([
      ['0', -1, null],
      ['1', 0, 'true'],
      ['2', -1, null],
    ]);
    fireEvent.keyDown(trs[1]!, { key: ' ' });
    fireEvent.keyDown(trs[1]!, { key: 'Enter' });
    expect(onRowClick).not.toHaveBeenCalled();
  });

  it('without one: every clickable row is a Tab stop and Enter opens it', () => {
    const onRowClick = vi.fn();
    const { container } = render(<Table columns={columns} rows={rows} rowKey={(r) => r.id} onRowClick={onRowClick} />);
    const trs = [...container.querySelectorAll<HTMLElement>('.trow[data-row-key]')];
    expect(trs.map((r) => [r.dataset.listRow, r.tabIndex])).toEqual([
      [undefined, 0],
      [undefined, 0],
      [undefined, 0],
    ]);
    fireEvent.keyDown(trs[2]!, { key: 'Enter' });
    expect(onRowClick).toHaveBeenCalledWith({ id: 9 });
  });
});
