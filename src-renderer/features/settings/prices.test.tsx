// @vitest-environment happy-dom
/** Settings: the price table, viewed, edited and saved through the real console; a bad price is said in words and changes nothing. */
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mountConsole, type MountedConsole } from '../../testing/console-mount';
import { PricesPanel } from './PricesPanel';

let m: MountedConsole;
beforeEach(() => (m = mountConsole()));
afterEach(() => {
  cleanup();
  m.dispose();
});

const type = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });

async function openEditor() {
  render(<PricesPanel />, { wrapper: m.wrapper });
  await m.pass(0);
  fireEvent.click(screen.getByTestId('prices-edit'));
}

const table = async () => (await m.kit.call('budgets.prices', {})).models;

describe('the price table in Settings', () => {
  it('shows the shipped rows with the day their prices were taken', async () => {
    render(<PricesPanel />, { wrapper: m.wrapper });
    await m.pass(0);
    expect(screen.getByTestId('prices-source').textContent).toBe('Shipped prices, as taken on 2025-11-25');
    const sonnet = screen.getAllByTestId('price-row').find((r) => r.textContent!.startsWith('claude-sonnet-4*'))!;
    expect([...sonnet.querySelectorAll('td')].map((td) => td.textContent)).toEqual(['claude-sonnet-4*', '$3', '$15', '$0.3', '$3.75']);
  });

  it('an edited price and a new row are saved; the table says it was edited', async () => {
    const before = await table();
    await openEditor();
    const rows = screen.getAllByTestId('price-row');
    const i = rows.findIndex((r) => within(r).getByLabelText(/model id or prefix/).getAttribute('value') === 'claude-sonnet-4*') + 1;
    type(`Row ${i}: output price`, '12');
    fireEvent.click(screen.getByTestId('prices-add'));
    const n = rows.length + 1;
    type(`Row ${n}: model id or prefix`, 'my-local-model*');
    type(`Row ${n}: input price`, '0');
    type(`Row ${n}: output price`, '$0.50');
    type('Reason optional, audited', 'negotiated rate');
    fireEvent.click(screen.getByTestId('prices-save'));
    await m.pass(0);
    const after = await table();
    expect(after['claude-sonnet-4*']).toEqual({ ...before['claude-sonnet-4*'], outputPerMTok: 12 });
    expect(after['my-local-model*']).toEqual({ inputPerMTok: 0, outputPerMTok: 0.5 });
    expect(Object.keys(after)).toHaveLength(Object.keys(before).length + 1);
    expect(screen.getByTestId('prices-source').textContent).toMatch(/^Edited /);
    expect(screen.queryByTestId('prices-save')).toBeNull();
  });

  it('a bad price or model id is said in plain words at its row, and nothing is sent or changed', async () => {
    const before = await table();
    await openEditor();
    type('Row 1: input price', 'three dollars');
    type('Row 2: model id or prefix', 'gpt 5*');
    type('Row 3: output price', '-1');
    fireEvent.click(screen.getByTestId('prices-save'));
    await m.pass(0);
    expect([...screen.getByTestId('prices-problems').querySelectorAll('li')].map((li) => li.textContent)).toEqual([
      'Row 1: the input price “three dollars” is not an amount of dollars per million tokens (0 to 100,000, e.g. 3 or 0.30).',
      'Row 2: “gpt 5*” is not a model id: use letters, digits, “_”, “-”, “.”, “:”, “/” or “@”, and a “*” only at the end for a prefix.',
      'Row 3: the output price “-1” is not an amount of dollars per million tokens (0 to 100,000, e.g. 3 or 0.30).',
    ]);
    expect(m.kit.countCalls('budgets.putPrices')).toBe(0);
    expect(await table()).toEqual(before);
    expect(screen.getByTestId('prices-save')).toBeTruthy();
  });

  it('restoring the shipped prices undoes an edit', async () => {
    await m.kit.call('budgets.putPrices', { models: { 'x*': { inputPerMTok: 1, outputPerMTok: 1 } } });
    await openEditor();
    fireEvent.click(screen.getByTestId('prices-reset'));
    await m.pass(0);
    expect(Object.keys(await table())).toContain('claude-sonnet-4*');
    expect(screen.getByTestId('prices-source').textContent).toBe('Shipped prices, as taken on 2025-11-25');
  });
});
