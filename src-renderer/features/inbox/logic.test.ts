import { describe, expect, it } from 'vitest';
import { entriesOf, fromLocalInput, itemDecision, itemLink, occurrenceFacts, snoozePresets, toLocalInput } from './logic';
import { draftFromView, draftProblems, draftToInput } from './notifications-form';

describe('item links', () => {
  it('a run opens its slot in the ledger, a task its queue, a job its ledger, a role its queue', () => {
    expect(itemLink({ subject: 'run:run_1', evidence: { jobId: 'job_a', slot: '2026-11-30' } })).toEqual({ label: 'Open the run', view: 'runs', param: 'job_a', query: { slot: '2026-11-30' } });
    expect(itemLink({ subject: 'task:12', evidence: { role: 'dev' } })).toEqual({ label: 'Open the task', view: 'queues', param: 'dev', query: { task: '12' } });
    expect(itemLink({ subject: 'job:job_a', evidence: {} })).toMatchObject({ view: 'runs', param: 'job_a' });
    expect(itemLink({ subject: 'role:data.eng', evidence: {} })).toMatchObject({ view: 'queues', param: 'data.eng', label: 'Open the data.eng queue' });
    expect(itemLink({ subject: 'instance:i_1', evidence: {} })).toMatchObject({ view: 'instances' });
    expect(itemLink({ subject: 'budget:global', evidence: {} })).toBeNull();
  });
});

describe('decisions from an item', () => {
  it('a held run is approved or rejected, a blocked task unblocked or cancelled (also when a spend cap stopped it); nothing once acknowledged', () => {
    expect(itemDecision({ kind: 'needs_human', subject: 'run:run_1', state: 'open' })).toBe('run');
    expect(itemDecision({ kind: 'held', subject: 'run:run_1', state: 'snoozed' })).toBe('run');
    expect(itemDecision({ kind: 'budget', subject: 'run:run_1', state: 'open' })).toBe('run');
    expect(itemDecision({ kind: 'needs_human', subject: 'task:12', state: 'open' })).toBe('task');
    expect(itemDecision({ kind: 'budget', subject: 'task:12', state: 'open' })).toBe('task');
    expect(itemDecision({ kind: 'budget', subject: 'budget:global', state: 'open' })).toBeNull();
    expect(itemDecision({ kind: 'repeated_failures', subject: 'job:job_a', state: 'open' })).toBeNull();
    expect(itemDecision({ kind: 'budget', subject: 'task:12', state: 'acked' })).toBeNull();
  });
});

describe('snooze', () => {
  it('presets: an hour, four hours, tomorrow and next Monday at 09:00 local', () => {
    const wed = new Date(2026, 10, 25, 15, 30).getTime(); // a Wednesday, local time
    const p = snoozePresets(wed);
    expect(p.map((x) => x.label)).toEqual(['1 hour', '4 hours', 'Tomorrow 09:00', 'Monday 09:00']);
    expect(Date.parse(p[0]!.until) - wed).toBe(3600_000);
    expect(new Date(p[2]!.until)).toEqual(new Date(2026, 10, 26, 9, 0));
    expect(new Date(p[3]!.until)).toEqual(new Date(2026, 10, 30, 9, 0));
    const mon = new Date(2026, 10, 30, 8, 0).getTime();
    expect(new Date(snoozePresets(mon)[3]!.until)).toEqual(new Date(2026, 11, 7, 9, 0)); // next week's Monday
  });

  it('datetime-local values round-trip; anything else is not a time', () => {
    const t = new Date(2026, 10, 25, 7, 5).getTime();
    expect(toLocalInput(t)).toBe('2026-11-25T07:05');
    expect(fromLocalInput('2026-11-25T07:05')).toBe(t);
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('tomorrow')).toBeNull();
  });
});

describe('evidence', () => {
  it('newest occurrence first, in words', () => {
    const item = { evidence: { entries: [{ slot: 'a', reason: 'old' }, { slot: 'b', reason: 'new', waitedS: 600, locks: [{ taskId: 3, title: 'fix' }] }] } };
    const [newest, oldest] = entriesOf(item);
    expect(newest).toMatchObject({ slot: 'b' });
    expect(oldest).toMatchObject({ slot: 'a' });
    expect(occurrenceFacts(newest!)).toEqual([
      { label: 'Slot', value: 'b' },
      { label: 'Why', value: 'new' },
      { label: 'Waited', value: '10 min' },
      { label: 'Tasks it held', value: '#3 fix' },
    ]);
  });
});

describe('notifications form', () => {
  const view = {
    webhooks: [{ id: 'wh_a', name: 'phone', url: 'https://ntfy.sh/gaff…', events: ['needs_human' as const], format: 'ntfy' as const, enabled: true, secret: 'whsec_…abcd', lastDelivery: null }],
    desktop: { kinds: ['needs_human' as const], quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' } },
    consoleUrl: 'http://127.0.0.1:7311/',
    consoleUrlSet: false,
  };

  it('a saved webhook keeps its URL unless a new one is typed; untouched, the form saves what it loaded', () => {
    const d = draftFromView(view);
    expect(d.webhooks[0]).toMatchObject({ id: 'wh_a', url: '', maskedUrl: 'https://ntfy.sh/gaff…' });
    expect(draftToInput(d)).toEqual({
      webhooks: [{ id: 'wh_a', name: 'phone', events: ['needs_human'], format: 'ntfy', enabled: true }],
      desktop: { kinds: ['needs_human'], quietHours: { start: '22:00', end: '07:00', timezone: 'Europe/Berlin' } },
    });
    expect(draftToInput({ ...d, quiet: false }).desktop!.quietHours).toBeNull();
  });

  it('says what the server would refuse', () => {
    const d = draftFromView(view);
    const bad = { ...d, webhooks: [...d.webhooks, { key: 'n', id: null, name: '', url: '', maskedUrl: null, events: [], format: 'json' as const, enabled: true }], quietStart: '08:00', quietEnd: '08:00' };
    expect(draftProblems(bad)).toEqual([
      { index: 1, message: 'A new webhook needs its URL.' },
      { index: 1, message: 'Choose at least one kind of item to send.' },
      { index: null, message: 'Quiet hours that start and end at the same time are never quiet.' },
    ]);
    expect(draftProblems({ ...d, webhooks: [{ ...d.webhooks[0]!, url: 'ftp://x' }] })).toEqual([{ index: 0, message: 'The URL must start with http:// or https://.' }]);
    expect(draftProblems(d)).toEqual([]);
  });
});
