/** Readiness signals for a business key (SPEC §5 signal preconditions). */
import { z } from 'zod';
import type { Page, Signal } from '../model';
import { jsonValue, listSignalsInput, reason, signalKey, signalName } from '../schemas';
import { op } from './define';
import { page, signal } from './shapes';

const BOTH = ['console', 'operator'] as const;
const signalReply = z.object({ signal });

export const signalOps = {
  /** Readiness signals, ordered by name then key (filter by name or key). */
  'signals.list': op<Page<Signal>>()({
    summary: 'List signals (filter by name or key).',
    input: listSignalsInput,
    result: page(signal),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/signals', status: { 200: '`{items, next}`' } }],
  }),
  'signals.get': op<Signal>()({
    summary: 'One signal.',
    input: z.strictObject({ name: signalName, key: signalKey }),
    result: signal,
    callers: ['operator'],
    reason: 'none',
    rest: [{ method: 'GET', path: '/signals/:name/:key', status: { 200: '`{signal}`' }, response: signalReply }],
  }),
  /**
   * Sets (or refreshes) a signal for a business key, e.g. `data-ready` for `2026-12-01`. The reason
   * is optional on every surface (the console used to demand one that the HTTP API and the core
   * did not): one schema for the console and the HTTP body.
   */
  'signals.set': op<{ signal: Signal; created: boolean }>()({
    summary: 'Set a readiness signal (e.g. `data-ready` for `2026-11-30`) that job preconditions wait for.',
    input: z.strictObject({ name: signalName, key: signalKey, value: jsonValue.optional(), reason: reason.optional() }),
    result: z.object({ signal, created: z.boolean() }),
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'POST', path: '/signals', status: { 200: '`{signal, created: false}`: updated', 201: '`{signal, created: true}`' } }],
  }),
  'signals.clear': op<Signal>()({
    summary: 'Clear a signal; the reason comes from `?reason=` or the body.',
    input: z.strictObject({ name: signalName, key: signalKey, reason }),
    result: signal,
    callers: BOTH,
    reason: 'required',
    rest: [{ method: 'DELETE', path: '/signals/:name/:key', status: { 200: '`{signal}`' }, response: signalReply }],
  }),
} as const;
