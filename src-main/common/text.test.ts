import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { GafferError } from './errors';
import { agentRequest } from './protocol';
import { jsonValue } from './schemas';
import { assertWellFormedText, decodeUtf8Strict, findIllFormedText, isWellFormedText, toWellFormedText, wellFormedDeep } from './text';
import { parseOrThrow } from './validate';

const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';
const PAIR = '\ud83d\ude00'; // 😀

describe('well-formed text', () => {
  it('tells unpaired surrogates from pairs, wherever they sit', () => {
    for (const s of ['', 'plain', PAIR, `a${PAIR}b`, '\ufffd', '\u0000', 'ключ', '调休上班']) expect(isWellFormedText(s), JSON.stringify(s)).toBe(true);
    for (const s of [LONE_HIGH, LONE_LOW, `k-${LONE_HIGH}-x`, `${LONE_LOW}${LONE_HIGH}`, `${PAIR.slice(0, 1)}`, `x${PAIR.slice(1)}`]) expect(isWellFormedText(s), JSON.stringify(s)).toBe(false);
  });

  it('exactly the well-formed strings survive a UTF-8 round trip', () => {
    const roundTrip = (s: string) => new TextDecoder().decode(new TextEncoder().encode(s));
    for (const s of ['a', PAIR, `k-${LONE_HIGH}-x`, LONE_LOW + LONE_HIGH, '\u0000x']) expect(roundTrip(s) === s).toBe(isWellFormedText(s));
  });

  it('toWellFormedText replaces each unpaired surrogate by U+FFFD and leaves the rest alone', () => {
    expect(toWellFormedText(`k-${LONE_HIGH}-x`)).toBe('k-\ufffd-x');
    expect(toWellFormedText(`${LONE_LOW}${PAIR}${LONE_HIGH}`)).toBe(`\ufffd${PAIR}\ufffd`);
    const ok = `fine ${PAIR}`;
    expect(toWellFormedText(ok)).toBe(ok);
  });

  it('finds the first bad value or key by its path, at any depth', () => {
    expect(findIllFormedText({ a: 1, b: ['x', { c: `y${LONE_HIGH}` }] })).toEqual({ path: ['b', 1, 'c'], key: false });
    expect(findIllFormedText({ payload: { [`k${LONE_LOW}`]: 1 } })).toEqual({ path: ['payload', 'k\ufffd'], key: true });
    expect(findIllFormedText(LONE_HIGH)).toEqual({ path: [], key: false });
    expect(findIllFormedText({ a: [1, null, true, 'ok', { b: PAIR }] })).toBeUndefined();
    let deep: unknown = `bottom${LONE_HIGH}`;
    for (let i = 0; i < 10_000; i++) deep = [deep];
    expect(findIllFormedText(deep)?.path).toHaveLength(10_000); // iterative: no stack overflow
  });

  it('wellFormedDeep normalises keys and values, and returns the same object when nothing is wrong', () => {
    const ok = { a: ['x', { b: PAIR }] };
    expect(wellFormedDeep(ok)).toBe(ok);
    expect(wellFormedDeep({ [`k${LONE_HIGH}`]: [`v${LONE_LOW}`, 2] })).toEqual({ 'k\ufffd': ['v\ufffd', 2] });
  });

  it('decodes UTF-8 strictly: bad bytes are refused, never replaced', () => {
    expect(decodeUtf8Strict(new TextEncoder().encode(`ok ${PAIR}`))).toBe(`ok ${PAIR}`);
    expect(decodeUtf8Strict(Uint8Array.from([0x6b, 0xff]))).toBeUndefined();
    expect(decodeUtf8Strict(Uint8Array.from([0xed, 0xa0, 0x80]))).toBeUndefined(); // an encoded surrogate
  });
});

describe('the one check at every parse', () => {
  it('parseOrThrow refuses a lone surrogate in any field, naming it, whatever the schema', () => {
    const loose = z.object({ name: z.string(), extra: z.unknown() });
    const err = (() => {
      try {
        parseOrThrow(loose, { name: 'n', extra: { list: ['a', `b${LONE_HIGH}`] } }, 'body');
      } catch (e) {
        return e as GafferError;
      }
      throw new Error('accepted');
    })();
    expect(err).toBeInstanceOf(GafferError);
    expect(err.code).toBe('bad_request');
    expect(err.message).toBe('invalid body at "extra.list.1": must be valid Unicode text (it holds an unpaired UTF-16 surrogate, which cannot be stored)');
    expect(() => assertWellFormedText({ [`k${LONE_LOW}`]: 1 }, 'query')).toThrow('invalid query at "k\ufffd": a key must be valid Unicode text');
  });

  it('jsonValue refuses bad keys and values inside a payload', () => {
    expect(jsonValue.safeParse({ a: [`x${LONE_HIGH}`] }).error?.issues[0]).toMatchObject({ path: ['a', 0], message: expect.stringMatching(/^must be valid Unicode text/) });
    expect(jsonValue.safeParse({ [LONE_LOW]: 1 }).error?.issues[0]?.message).toMatch(/^a key must be valid Unicode text/);
    expect(jsonValue.safeParse({ a: [PAIR] }).success).toBe(true);
  });

  it('every agent frame is checked, fields and payloads alike', () => {
    const frames = [
      { id: 1, type: 'hello', role: 'dev', name: `n${LONE_HIGH}` },
      { id: 1, type: 'report', taskId: 1, fence: 1, status: 'done', note: `n${LONE_LOW}` },
      { id: 1, type: 'report', taskId: 1, fence: 1, status: 'done', output: { [LONE_HIGH]: 1 } },
      { id: 1, type: 'create_task', title: 't', role: 'dev', idempotencyKey: `k-${LONE_HIGH}-x` },
      { id: 1, type: 'run_step', runId: 'r', step: `s${LONE_HIGH}` },
      { id: 1, type: 'precheck_result', requestId: 'q', ready: true, evidence: { a: LONE_LOW } },
    ];
    for (const f of frames) {
      const r = agentRequest.safeParse(f);
      expect(r.success, JSON.stringify(f)).toBe(false);
      expect(r.error!.issues[0]!.message).toMatch(/valid Unicode text/);
    }
    expect(agentRequest.safeParse({ id: 1, type: 'create_task', title: `t ${PAIR}`, role: 'dev' }).success).toBe(true);
  });
});
