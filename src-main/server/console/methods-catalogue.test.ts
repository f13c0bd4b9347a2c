/**
 * The console's method table against the operation catalogue (common/ops): every console operation
 * has a handler and every handler an operation, checked when the table is made; arguments are
 * parsed with the entry's schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_METHODS } from '../../common/console-api';
import { OPS, opsFor } from '../../common/ops';
import type { TestCore } from '../../core/tests/test-core';
import { checkHandlers, type ConsoleMethods } from './methods';
import { consoleUnderTest } from '../tests/methods.testkit';

let core: TestCore;
let m: ConsoleMethods;
beforeAll(() => ({ core, m } = consoleUnderTest({ actor: 'operator:desktop' })));
afterAll(() => core.close());

describe('console handlers ⇔ catalogue', () => {
  it('the console methods are the catalogue operations whose callers include the console, and the live table starts', () => {
    expect(CONSOLE_METHODS).toEqual(opsFor('console'));
    expect(CONSOLE_METHODS.length).toBeGreaterThan(80);
    // createConsoleMethods ran checkHandlers over its own table: it would have thrown.
    expect(m.readModels).toBeDefined();
  });

  it('a catalogue entry without a handler fails at start, naming it', () => {
    const names = CONSOLE_METHODS.filter((n) => n !== 'signals.set');
    expect(() => checkHandlers(names)).toThrow(/no handler for signals\.set/);
  });

  it('a handler without a console operation fails at start, naming it', () => {
    expect(() => checkHandlers([...CONSOLE_METHODS, 'signals.explode'])).toThrow(/no console operation for signals\.explode/);
    // An operator-only operation (an HTTP route) is not a console method either.
    expect(() => checkHandlers([...CONSOLE_METHODS, 'runs.cancel'])).toThrow(/no console operation for runs\.cancel/);
    expect(() => checkHandlers(CONSOLE_METHODS)).not.toThrow();
  });

  it('an operator-only operation is not callable from the console', async () => {
    expect(OPS['runs.cancel'].callers).toEqual(['operator']);
    const r = await m.dispatch('runs.cancel', { id: 'x', reason: 'r' });
    expect(r).toMatchObject({ ok: false, error: { code: 'bad_request', message: expect.stringContaining('unknown console method') } });
  });

  it('signals.set takes the one schema of its entry: the reason is optional on the console too, and refused when blank while reasons are required', async () => {
    const set = await m.call('signals.set', { name: 'data-ready', key: '2026-12-01' });
    expect(set.created).toBe(true);
    // A solo operator (the default): a blank optional reason is no reason.
    expect((await m.dispatch('signals.set', { name: 'data-ready', key: '2026-12-02', reason: ' ' })).ok).toBe(true);
    core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
    expect((await m.dispatch('signals.set', { name: 'data-ready', key: '2026-12-03', reason: ' ' })).ok).toBe(false);
    core.operatorSettings.setRequireReason({ on: false, actor: 'test' });
  });
});
