import { describe, expect, it } from 'vitest';
import { DEFAULT_WEBHOOK_EVENTS, INBOX_SEVERITY, type InboxItem } from '../../../src-main/common/attention';
import { emptyWords, entriesOf, focusParam, formatWait, fromLocalInput, itemDecision, itemLink, liveDetail, liveFacts, occurrenceFacts, retryTarget, snoozePresets, STATE_TABS, toLocalInput, withoutFocused } from './logic';
import { deliveryWords, draftFromView, draftProblems, draftToInput, newHookDraft, revealedSecrets } from './notifications-form';

describe('item links', () => {
  it('a run opens its slot in the ledger, a task its queue, a job its ledger, a role its queue', () => {
    expect(itemLink({ subject: 'run:run_1', evidence: { jobId: 'job_a', slot: '2026-11-30' } })).toEqual({ label: 'Open the run', view: 'runs', param: 'job_a', query: { slot: '2026-11-30' } });
    expect(itemLink({ subject: 'task:12', evidence: { role: 'dev' } })).toEqual({ label: 'Open the task', view: 'queues', param: 'dev', query: { task: '12' } });
    expect(itemLink({ subject: 'job:job_a', evidence: {} })).toMatchObject({ view: 'runs', param: 'job_a' });
    expect(itemLink({ subject: 'role:data.eng', evidence: {} })).toMatchObject({ view: 'queues', param: 'data.eng', label: 'Open the data.eng queue' });
    expect(itemLink({ subject: 'instance:i_1', evidence: {} })).toMatchObject({ view: 'instances' });
    expect(itemLink({ subject: 'budget:global', evidence: {} })).toBeNull();
  });

  it('a failed run opens its newest failed slot; a crash-looping agent its page; an undelivered notification the webhooks', () => {
    const failed = { subject: 'job:job_a', evidence: { jobId: 'job_a', job: 'nightly-qa', entries: [{ runId: 'run_1', slot: '2026-12-03' }, { runId: 'run_2', slot: '2026-12-04' }] } };
    expect(itemLink(failed)).toEqual({ label: 'Open the slot ledger', view: 'runs', param: 'job_a', query: { slot: '2026-12-04' } });
    expect(itemLink({ subject: 'managed:mgd_1', evidence: { managedAgentId: 'mgd_1', name: 'claude-dev' } })).toEqual({ label: 'Open the agent', view: 'managed', param: 'claude-dev', query: {} });
    expect(itemLink({ subject: 'webhook:wh_1', evidence: { webhookId: 'wh_1' } })).toEqual({ label: 'Open notifications', view: 'inbox', param: null, query: { tab: 'notifications' } });
  });
});

describe('retry now', () => {
  const item = (p: Partial<InboxItem>) => ({ kind: 'run_failed' as const, subject: 'job:job_a', state: 'open' as const, evidence: { job: 'nightly-qa', entries: [{ runId: 'run_1', slot: '2026-12-03' }, { runId: 'run_2', slot: '2026-12-04' }] }, ...p });

  it('retries the newest failed run of a live failure item of a job', () => {
    expect(retryTarget(item({}))).toEqual({ id: 'run_2', jobId: 'job_a', job: 'nightly-qa', slot: '2026-12-04' });
    expect(retryTarget(item({ state: 'snoozed', kind: 'repeated_failures' }))).toMatchObject({ id: 'run_2' });
  });

  it('not once the item is resolved or acknowledged, nor for other kinds or items without a run', () => {
    expect(retryTarget(item({ state: 'resolved' }))).toBeNull();
    expect(retryTarget(item({ state: 'acked' }))).toBeNull();
    expect(retryTarget(item({ kind: 'dead_man' }))).toBeNull();
    expect(retryTarget(item({ evidence: { entries: [{ slot: 'x' }] } }))).toBeNull();
  });
});

describe('states', () => {
  it('a Resolved tab; each empty list says what shows up there, the open one naming failures', () => {
    expect(STATE_TABS.map((t) => t.label)).toEqual(['Open', 'Snoozed', 'Acknowledged', 'Resolved']);
    expect(emptyWords('open').body).toMatch(/Failed runs and tasks.*crash-looping agents/);
    expect(emptyWords('resolved').title).toBe('Nothing resolved itself yet');
  });

  it('a resolved item offers no decision', () => {
    expect(itemDecision({ kind: 'needs_human', subject: 'run:run_1', state: 'resolved' })).toBeNull();
  });
});

describe('deep link', () => {
  it('#/inbox?item=<id> names the item; anything else names none', () => {
    expect(focusParam({ item: '42' })).toBe(42);
    expect(focusParam({})).toBeNull();
    expect(focusParam({ item: 'abc' })).toBeNull();
    expect(focusParam({ item: '0' })).toBeNull();
    expect(focusParam({ item: '-3' })).toBeNull();
  });

  it('the focused item is shown once: on top, not again in the list', () => {
    const items = [{ id: 1 }, { id: 2 }, { id: 3 }] as InboxItem[];
    expect(withoutFocused(items, 2).map((i) => i.id)).toEqual([1, 3]);
    expect(withoutFocused(items, null).map((i) => i.id)).toEqual([1, 2, 3]);
  });
});

describe('live waits', () => {
  const at = Date.parse('2026-12-05T10:00:00.000Z');
  const stuck = {
    detail: 'The oldest has waited 10 min. No instance of the role has ever connected.',
    state: 'open' as InboxItem['state'],
    lastAt: '2026-12-05T10:00:00.000Z',
    ackedAt: null,
    resolvedAt: null,
    evidence: { entries: [{ ready: 1, waitedS: 600 }] },
  };

  it('"waited N min" keeps counting from the occurrence while the item is open', () => {
    expect(liveDetail(stuck, at)).toBe('The oldest has waited 10 min. No instance of the role has ever connected.');
    expect(liveDetail(stuck, at + 5 * 60_000)).toBe('The oldest has waited 15 min. No instance of the role has ever connected.');
    expect(liveDetail(stuck, at + 3 * 3600_000)).toMatch(/^The oldest has waited 3 h 10 min\./);
    expect(liveFacts(stuck, stuck.evidence.entries[0]!, true, at + 5 * 60_000)).toContainEqual({ label: 'Waited', value: '15 min' });
    // An older occurrence keeps the wait it had.
    expect(liveFacts(stuck, stuck.evidence.entries[0]!, false, at + 5 * 60_000)).toContainEqual({ label: 'Waited', value: '10 min' });
  });

  it('stops when the item was resolved; an item without a wait is left as it is', () => {
    const resolved = { ...stuck, state: 'resolved' as const, resolvedAt: '2026-12-05T10:02:00.000Z' };
    expect(liveDetail(resolved, at + 3600_000)).toMatch(/^The oldest has waited 12 min\./);
    expect(liveDetail({ ...stuck, evidence: {} }, at + 3600_000)).toBe(stuck.detail);
    expect([formatWait(59 * 60), formatWait(3 * 86400 + 3600)]).toEqual(['59 min', '3 d 1 h']);
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

  it('the console address: empty shows the default as a hint; it is sent only when changed (empty: back to the default)', () => {
    const d = draftFromView(view);
    expect(d).toMatchObject({ consoleUrl: '', consoleUrlDefault: 'http://127.0.0.1:7311/' });
    expect(draftToInput({ ...d, consoleUrl: ' https://gaffer.example.net/ ' }).consoleUrl).toBe('https://gaffer.example.net/');
    const set = draftFromView({ ...view, consoleUrl: 'https://gaffer.example.net/', consoleUrlSet: true });
    expect(set).toMatchObject({ consoleUrl: 'https://gaffer.example.net/', consoleUrlDefault: '' });
    expect('consoleUrl' in draftToInput(set)).toBe(false);
    expect(draftToInput({ ...set, consoleUrl: '' }).consoleUrl).toBeNull();
    expect(draftProblems({ ...d, consoleUrl: 'gaffer.local' })).toEqual([{ index: null, message: 'Console address: That is not a URL.' }]);
  });

  it('a new webhook starts with every critical and warning kind ticked', () => {
    const h = newHookDraft('n1');
    expect(h.events).toEqual(DEFAULT_WEBHOOK_EVENTS);
    expect(h.events).toContain('run_failed');
    expect(h.events).toContain('crash_looping');
    expect(h.events.every((k) => INBOX_SEVERITY[k] !== 'info')).toBe(true);
  });

  it('the whole secret of a webhook the save added is shown once; masked ones are not', () => {
    const reply = {
      ...view,
      webhooks: [view.webhooks[0]!, { ...view.webhooks[0]!, id: 'wh_b', name: null, url: 'https://hooks.example/…', secret: 'whsec_0123456789abcdefghijklmnopqrstuv' }],
    };
    expect(revealedSecrets(reply)).toEqual([{ webhookId: 'wh_b', label: 'https://hooks.example/…', secret: 'whsec_0123456789abcdefghijklmnopqrstuv' }]);
    expect(revealedSecrets(view)).toEqual([]);
  });

  it('a delivery reads as the item it sent and the webhook it went to, not their ids', () => {
    const hooks = [{ id: 'wh_a', name: 'phone', url: 'https://ntfy.sh/gaff…' }];
    expect(deliveryWords({ kind: 'run_failed', itemTitle: 'nightly-qa 2026-12-04 failed', webhookId: 'wh_a' }, hooks)).toEqual({ what: 'nightly-qa 2026-12-04 failed', to: 'phone' });
    expect(deliveryWords({ kind: 'test', itemTitle: null, webhookId: 'wh_gone' }, hooks)).toEqual({ what: 'Test notice', to: 'a removed webhook' });
  });

  it('says what the server would refuse', () => {
    const d = draftFromView(view);
    const bad = { ...d, webhooks: [...d.webhooks, { ...newHookDraft('n'), events: [] }], quietStart: '08:00', quietEnd: '08:00' };
    expect(draftProblems(bad)).toEqual([
      { index: 1, message: 'A new webhook needs its URL.' },
      { index: 1, message: 'Choose at least one kind of item to send.' },
      { index: null, message: 'Quiet hours that start and end at the same time are never quiet.' },
    ]);
    expect(draftProblems({ ...d, webhooks: [{ ...d.webhooks[0]!, url: 'ftp://x' }] })).toEqual([{ index: 0, message: 'The URL must start with http:// or https://.' }]);
    expect(draftProblems(d)).toEqual([]);
  });
});
