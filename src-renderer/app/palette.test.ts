import { describe, expect, it } from 'vitest';
import { handleKey, initialChordState } from './shortcuts';
import { paletteItems } from './palette';
import { ROUTES } from './views';

const jobs = [
  { id: 'j1', name: 'nightly-report' },
  { id: 'j2', name: 'refunds' },
];

describe('the command palette', () => {
  it('opens with Ctrl/⌘+K, also from a field', () => {
    for (const k of [{ ctrlKey: true }, { metaKey: true }, { ctrlKey: true, inField: true }]) {
      expect(handleKey(initialChordState(), { key: 'k', at: 0, ...k }, ROUTES).action).toEqual({ kind: 'palette' });
    }
    expect(handleKey(initialChordState(), { key: 'k', at: 0 }, ROUTES).action).toBeNull();
  });

  it('finds views, jobs (editor, runs, why) and actions by every typed word; tasks are searched by the server', () => {
    expect(paletteItems('', ROUTES, jobs).map((i) => i.kind)).toContain('view');
    const refunds = paletteItems('refunds', ROUTES, jobs);
    expect(refunds.map((i) => i.label)).toEqual(['refunds', 'Runs of refunds', 'Why didn’t refunds run?', 'Find tasks matching “refunds”']);
    expect(refunds[0]!.to).toEqual({ view: 'jobs', param: 'j2' });
    expect(refunds[3]!.to).toEqual({ view: 'tasks', query: { q: 'refunds' } });
    expect(paletteItems('inbox', ROUTES, jobs)[0]).toMatchObject({ kind: 'view', to: { view: 'inbox' } });
    expect(paletteItems('keyboard', ROUTES, jobs)[0]).toMatchObject({ kind: 'action', to: 'help' });
  });
});
