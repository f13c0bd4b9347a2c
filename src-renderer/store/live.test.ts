import { describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src-main/common/console-api';
import { ManualTimers } from '../testing/manual-timers';
import { applyEvent, createCoalescer, emptyInvalidation, type Invalidation } from './live';

const audit = (id: number, type = 'lock.claim', detail: unknown = {}): ConsoleEvent => ({
  type: 'audit.appended',
  event: { id, at: '', type, actor: 'a', subject: 's', detail, traceId: null, prevHash: '', hash: '' },
});

describe('live event coalescing', () => {
  it('maps events to topics', () => {
    const inv = emptyInvalidation();
    applyEvent(inv, { type: 'task.changed', taskId: 1, role: 'dev', status: 'in_progress' });
    applyEvent(inv, { type: 'lock.expired', taskId: 1, instanceId: 'i' });
    applyEvent(inv, audit(7, 'token.create'));
    applyEvent(inv, audit(9, 'lock.claim', { previouslyExpired: true }));
    expect([...inv.topics].sort()).toEqual(['audit', 'dashboard', 'expiredLocks', 'instances', 'queue', 'roles', 'tasks', 'tokens', 'usage']);
    expect([...applyEvent(emptyInvalidation(), audit(10, 'signal.set')).topics].sort()).toEqual(['audit', 'signals']);
    expect([...inv.roles]).toEqual(['dev']);
    expect(inv.auditAppended).toBe(2);
    expect(inv.newestAuditId).toBe(9);
  });

  it('keeps the newest tail of each log that grew', () => {
    const inv = emptyInvalidation();
    applyEvent(inv, { type: 'log.appended', subject: 'task:1', attempt: 1, lastSeq: 10 });
    applyEvent(inv, { type: 'log.appended', subject: 'task:1', attempt: 2, lastSeq: 25 });
    applyEvent(inv, { type: 'log.appended', subject: 'task:1', attempt: 1, lastSeq: 12 }); // older news
    applyEvent(inv, { type: 'log.appended', subject: 'run:r', attempt: 1, lastSeq: 3 });
    expect([...inv.topics]).toEqual(['logs']);
    expect(Object.fromEntries(inv.logTails)).toEqual({ 'task:1': { attempt: 2, lastSeq: 25 }, 'run:r': { attempt: 1, lastSeq: 3 } });
  });

  it('turns a burst of 10 000 events into one flush per interval', () => {
    const t = new ManualTimers();
    const flushed: Invalidation[] = [];
    const co = createCoalescer((i) => flushed.push(i), 250, t);
    for (let i = 0; i < 10_000; i++) co.push(i % 2 ? audit(i) : { type: 'task.changed', taskId: i, role: i % 4 ? 'dev' : 'pm', status: 'done' });
    expect(flushed).toHaveLength(0);
    t.advance(250);
    expect(flushed).toHaveLength(1);
    expect(flushed[0]!.auditAppended).toBe(5000);
    expect([...flushed[0]!.roles].sort()).toEqual(['dev', 'pm']);
    expect(co.received).toBe(10_000);
    co.push({ type: 'settings.changed' });
    t.advance(250);
    expect(flushed).toHaveLength(2);
    expect([...flushed[1]!.topics].sort()).toEqual(['dashboard', 'notifications', 'settings']);
    t.advance(1000);
    expect(flushed).toHaveLength(2);
  });

  it('stops after dispose', () => {
    const t = new ManualTimers();
    const flushed: Invalidation[] = [];
    const co = createCoalescer((i) => flushed.push(i), 100, t);
    co.push({ type: 'settings.changed' });
    co.dispose();
    t.advance(500);
    co.push({ type: 'settings.changed' });
    t.advance(500);
    expect(flushed).toHaveLength(0);
  });
});
