import { afterEach, describe, expect, it } from 'vitest';
import { GafferError } from '../../common/errors';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { idOfText, TaskSearch } from './search-store';

let core: TestCore;
afterEach(() => core?.close());

const who = { actor: 'operator:test' };
const titles = (p: { items: Array<{ title: string }> }) => p.items.map((t) => t.title);

describe('task search: title, payload text, id', () => {
  it('matches titles and payload text case-insensitively, and an id written as 42 or #42', () => {
    core = makeTestCore();
    const a = core.tasks.create({ title: 'Refactor the Billing service', role: 'dev' }, who).task;
    core.tasks.create({ title: 'Write docs', role: 'dev', payload: { repo: 'billing-api', ticket: 7 } }, who);
    core.tasks.create({ title: 'Unrelated', role: 'pm' }, who);
    expect(titles(core.tasks.list({ q: 'BILLING' }))).toEqual(['Refactor the Billing service', 'Write docs']);
    expect(titles(core.tasks.list({ q: 'billing', role: 'dev', order: 'desc' }))).toEqual(['Write docs', 'Refactor the Billing service']);
    expect(titles(core.tasks.list({ q: `#${a.id}` }))).toEqual(['Refactor the Billing service']);
    expect(titles(core.tasks.list({ q: 'billing', status: 'done' }))).toEqual([]);
    expect(core.tasks.list({ q: 'billing' }).partial).toBe(false);
  });

  it('takes %, _ and \\ literally', () => {
    core = makeTestCore();
    core.tasks.create({ title: 'grow 50% faster', role: 'dev' }, who);
    core.tasks.create({ title: 'grow 500 faster', role: 'dev' }, who);
    core.tasks.create({ title: 'snake_case', role: 'dev' }, who);
    core.tasks.create({ title: 'snakeXcase', role: 'dev' }, who);
    core.tasks.create({ title: 'a\\b', role: 'dev' }, who);
    expect(titles(core.tasks.list({ q: '50%' }))).toEqual(['grow 50% faster']);
    expect(titles(core.tasks.list({ q: 'e_c' }))).toEqual(['snake_case']);
    expect(titles(core.tasks.list({ q: 'a\\b' }))).toEqual(['a\\b']);
  });

  it('reads a bounded number of rows per call: a sparse search comes back partial and pages on to every match once', () => {
    core = makeTestCore();
    const matches: number[] = [];
    for (let i = 1; i <= 35; i++) {
      const t = core.tasks.create({ title: i % 7 === 0 ? `needle ${i}` : `hay ${i}`, role: 'dev' }, who).task;
      if (i % 7 === 0) matches.push(t.id);
    }
    const search = new TaskSearch(core.db);
    const seen: number[] = [];
    let from = 0;
    let calls = 0;
    let partials = 0;
    for (;;) {
      const r = search.scan({ filter: { q: 'needle' }, order: 'asc', from, limit: 3, scanRows: 10 });
      calls++;
      if (r.partial) partials++;
      expect(r.rows.length).toBeLessThanOrEqual(3);
      seen.push(...r.rows.map((x) => x.id));
      if (r.next === null) break;
      from = r.next;
    }
    expect(seen).toEqual(matches);
    expect(calls).toBe(4); // 35 rows, 10 per call
    expect(partials).toBeGreaterThan(0);
  });

  it('pages newest first with the same budget', () => {
    core = makeTestCore();
    for (let i = 1; i <= 12; i++) core.tasks.create({ title: `job ${i}`, role: 'dev' }, who);
    const search = new TaskSearch(core.db);
    const first = search.scan({ filter: { q: 'job' }, order: 'desc', from: Number.MAX_SAFE_INTEGER, limit: 5, scanRows: 100 });
    expect(first.rows.map((r) => r.title)).toEqual(['job 12', 'job 11', 'job 10', 'job 9', 'job 8']);
    const second = search.scan({ filter: { q: 'job' }, order: 'desc', from: first.next!, limit: 5, scanRows: 100 });
    expect(second.rows.map((r) => r.title)).toEqual(['job 7', 'job 6', 'job 5', 'job 4', 'job 3']);
  });

  it('an empty search text is a bad request naming the field', () => {
    core = makeTestCore();
    try {
      core.tasks.list({ q: '  ' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(GafferError);
      expect((e as GafferError).code).toBe('bad_request');
      expect((e as GafferError).message).toContain('"q"');
    }
  });

  it('reads an id only from digits, with or without #', () => {
    expect(idOfText('42')).toBe(42);
    expect(idOfText(' #7 ')).toBe(7);
    expect(idOfText('4x')).toBeNull();
    expect(idOfText('#')).toBeNull();
  });
});
