import { describe, expect, it } from 'vitest';
import { formatHash, parseHash, VIEW_IDS, viewForConsoleView, viewForDigit } from '../lib/routes';
import { ROUTES } from './views';
import { CHORD_TIMEOUT_MS, digitsFor, handleKey, initialChordState, shortcutList, type KeyInput } from './shortcuts';

function press(keys: Array<Partial<KeyInput> & { key: string }>, start = 0) {
  let state = initialChordState();
  const actions = [];
  let at = start;
  for (const k of keys) {
    at = k.at ?? at + 100;
    const r = handleKey(state, { ...k, at }, ROUTES);
    state = r.state;
    actions.push(r.action);
  }
  return actions;
}

describe('keyboard shortcuts', () => {
  it('g + letter navigates', () => {
    expect(press([{ key: 'g' }, { key: 'd' }])).toEqual([null, { kind: 'navigate', view: 'dashboard' }]);
    expect(press([{ key: 'g' }, { key: 'q' }])[1]).toEqual({ kind: 'navigate', view: 'queues' });
    expect(press([{ key: 'g' }, { key: 'i' }])[1]).toEqual({ kind: 'navigate', view: 'instances' });
    expect(press([{ key: 'g' }, { key: 'a' }])[1]).toEqual({ kind: 'navigate', view: 'audit' });
    expect(press([{ key: 'g' }, { key: 's' }])[1]).toEqual({ kind: 'navigate', view: 'settings' });
    expect(press([{ key: 'g' }, { key: 'e' }])[1]).toEqual({ kind: 'navigate', view: 'locks' });
    expect(press([{ key: 'g' }, { key: 'j' }])[1]).toEqual({ kind: 'navigate', view: 'jobs' });
    expect(press([{ key: 'g' }, { key: 'r' }])[1]).toEqual({ kind: 'navigate', view: 'runs' });
    expect(press([{ key: 'g' }, { key: 'w' }])[1]).toEqual({ kind: 'navigate', view: 'why' });
    expect(press([{ key: 'g' }, { key: 'c' }])[1]).toEqual({ kind: 'navigate', view: 'calendars' });
  });

  it('a pending g expires, and an unknown second key does nothing', () => {
    expect(press([{ key: 'g', at: 0 }, { key: 'd', at: CHORD_TIMEOUT_MS + 1 }])[1]).toBeNull();
    expect(press([{ key: 'g' }, { key: 'x' }, { key: 'd' }])).toEqual([null, null, null]);
  });

  it('never fires while typing in a field, except Esc and Ctrl/Cmd+digit', () => {
    expect(press([{ key: 'g', inField: true }, { key: 'd', inField: true }])).toEqual([null, null]);
    expect(press([{ key: '/', inField: true }])).toEqual([null]);
    expect(press([{ key: 'Escape', inField: true }])).toEqual([{ kind: 'escape' }]);
    expect(press([{ key: '8', ctrlKey: true, inField: true }])).toEqual([{ kind: 'navigate', view: 'audit' }]);
  });

  it('/ focuses the filter, ? opens help, Esc closes', () => {
    expect(press([{ key: '/' }])).toEqual([{ kind: 'focusFilter' }]);
    expect(press([{ key: '?', shiftKey: true }])).toEqual([{ kind: 'help' }]);
    expect(press([{ key: 'Escape' }])).toEqual([{ kind: 'escape' }]);
  });

  it('Ctrl/Cmd+1…9 follow the shell’s view order (same as Electron’s Go menu)', () => {
    expect(press([{ key: '1', ctrlKey: true }])).toEqual([{ kind: 'navigate', view: 'dashboard' }]);
    expect(press([{ key: '3', metaKey: true }])).toEqual([{ kind: 'navigate', view: 'locks' }]);
    expect(press([{ key: '9', ctrlKey: true }])).toEqual([{ kind: 'navigate', view: 'settings' }]);
    expect(viewForDigit(5)).toBe('jobs');
    expect(viewForDigit(6)).toBe('runs');
    expect(viewForDigit(7)).toBe('why');
    expect(viewForConsoleView('calendars')).toBe('calendars');
    expect(viewForConsoleView('expired-locks')).toBe('locks');
    expect(digitsFor('audit')).toEqual([8]);
    // Ctrl+g is not a chord.
    expect(press([{ key: 'g', ctrlKey: true }, { key: 'd' }])).toEqual([null, null]);
  });

  it('the shell lists every view exactly once', () => {
    expect(ROUTES.map((r) => r.id).sort()).toEqual([...VIEW_IDS].sort());
    expect(new Set(ROUTES.map((r) => r.chord)).size).toBe(ROUTES.length);
  });

  it('lists every view in the help', () => {
    const list = shortcutList(ROUTES);
    for (const r of ROUTES) expect(list.some((s) => s.what === r.label && s.keys.includes(`g ${r.chord}`))).toBe(true);
  });

  it('lists the inbox keys: moving, selecting and the action letters', () => {
    const keys = shortcutList(ROUTES).flatMap((s) => s.keys);
    for (const k of ['j', 'k', 'x', 'a', 'r', 'e', 'c']) expect(keys).toContain(k);
  });

  it('lists the action letters of Tasks, Role queues, Runs and Jobs, each under its list', () => {
    const list = shortcutList(ROUTES);
    const has = (key: string, start: string) => list.some((s) => s.keys.includes(key) && s.what.startsWith(start));
    expect([has('r', 'Tasks: retry'), has('c', 'Tasks: cancel'), has('r', 'Runs: retry'), has('t', 'Jobs: trigger now'), has('p', 'Jobs: pause'), has('a', 'Role queues: unblock')]).toEqual([true, true, true, true, true, true]);
    expect(new Set(list.map((s) => s.what)).size).toBe(list.length);
  });
});

describe('hash routes', () => {
  it('parses and formats', () => {
    expect(parseHash('#/queues/dev?task=12')).toEqual({ view: 'queues', param: 'dev', query: { task: '12' } });
    expect(parseHash('#/audit?subject=task%3A5')).toEqual({ view: 'audit', param: null, query: { subject: 'task:5' } });
    expect(parseHash('')).toEqual({ view: 'dashboard', param: null, query: {} });
    expect(parseHash('#token=abc')).toEqual({ view: 'dashboard', param: null, query: {} });
    expect(parseHash('#/nope')).toEqual({ view: 'dashboard', param: null, query: {} });
    expect(formatHash({ view: 'queues', param: 'data.eng', query: { task: '3' } })).toBe('#/queues/data.eng?task=3');
    const h = formatHash({ view: 'audit', query: { subject: 'task:5', actor: '' } });
    expect(h).toBe('#/audit?subject=task%3A5');
    expect(parseHash(h).query).toEqual({ subject: 'task:5' });
  });
});
