/** `settingsRow`: one JSON document per key of the settings table, absent until written, replaced whole. */
import { afterEach, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { settingsRow } from './settings-row';

let core: TestCore | undefined;
afterEach(() => core?.close());

it('reads undefined until written, then the document last written; keys do not mix', () => {
  core = makeTestCore();
  const a = settingsRow<{ on: boolean; n?: number }>(core.db, 'test.a');
  const b = settingsRow<{ on: boolean }>(core.db, 'test.b');
  expect(a.read()).toBeUndefined();
  a.write({ on: true, n: 1 });
  a.write({ on: false });
  expect(a.read()).toEqual({ on: false });
  expect(b.read()).toBeUndefined();
  expect(core.db.prepare('SELECT value FROM settings WHERE key = ?').get('test.a')).toEqual({ value: '{"on":false}' });
});
