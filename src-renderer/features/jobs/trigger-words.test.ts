import { describe, expect, it } from 'vitest';
import { choiceEffect, choiceTitle, triggerSummary } from './trigger-words';

describe('trigger dialog words', () => {
  it('names each slot offered and what running it does', () => {
    expect(choiceTitle('current')).toBe('The slot now');
    expect(choiceEffect({ effect: 'claim', run: null })).toMatch(/claimed and run/);
    expect(choiceEffect({ effect: 'dispatch', run: { id: 'run_1', status: 'pending', disposition: 'waiting' } })).toMatch(/run_1 is waiting: it runs now/);
    expect(choiceEffect({ effect: 'exists', run: { id: 'run_2', status: 'success', disposition: 'ran' } })).toMatch(/already has run run_2: nothing new/);
  });

  it('says which slot runs, and when, before it runs', () => {
    expect(triggerSummary('2026-11-29', { which: 'current', effect: 'claim' }, false)).toBe('Runs slot 2026-11-29 (the slot the current instant falls in) now.');
    expect(triggerSummary('2026-11-30', { which: 'next', effect: 'claim' }, true)).toBe('Claims slot 2026-11-30; it runs as soon as its preconditions pass.');
    expect(triggerSummary('', null, false)).toBe('Pick a slot.');
  });
});
