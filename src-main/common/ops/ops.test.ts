/**
 * The catalogue's own rules (define.ts): one reason rule per operation, agreed by its console
 * input; unique names and routes; the result schema checked against the result type at compile
 * time.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { op, type Op } from './define';
import { OPS } from '.';

const entries = Object.entries(OPS as Record<string, Op>);

/** `required` / `optional` / `none`: what an input object schema says about a field. */
function fieldRule(schema: z.ZodType, field: string): 'required' | 'optional' | 'none' {
  const js = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown>; required?: string[] };
  if (!js.properties || !(field in js.properties)) return 'none';
  return js.required?.includes(field) ? 'required' : 'optional';
}

describe('operation catalogue', () => {
  it('every operation has a summary, callers, and a reason rule its input agrees with', () => {
    const wrong: string[] = [];
    for (const [name, o] of entries) {
      expect(o.summary, name).toMatch(/\S/);
      expect(o.callers.length, name).toBeGreaterThan(0);
      const found = fieldRule(o.input, o.reasonField ?? 'reason');
      if (found !== o.reason) wrong.push(`${name}: declared ${o.reason}, input says ${found}`);
    }
    expect(wrong).toEqual([]);
  });

  it('signals.set has one answer: the reason is optional', () => {
    expect(OPS['signals.set'].reason).toBe('optional');
    expect(OPS['signals.set'].input.safeParse({ name: 'data-ready', key: 'k' }).success).toBe(true);
    expect(OPS['signals.set'].input.safeParse({ name: 'data-ready', key: 'k', reason: '' }).success).toBe(false);
  });

  it('routes are unique (method and path) across the catalogue', () => {
    const seen = new Map<string, string>();
    for (const [name, o] of entries) {
      for (const r of o.rest ?? []) {
        const key = `${r.method} ${r.path.replace(/:[^/]+/g, ':')}`;
        expect(seen.get(key), `${key} of ${name}`).toBeUndefined();
        seen.set(key, name);
      }
    }
    expect(seen.size).toBeGreaterThan(80);
  });

  it('the reason rule sees a field that is missing, optional or required', () => {
    expect(fieldRule(z.strictObject({ a: z.string() }), 'reason')).toBe('none');
    expect(fieldRule(z.strictObject({ reason: z.string().optional() }), 'reason')).toBe('optional');
    expect(fieldRule(z.strictObject({ reason: z.string() }), 'reason')).toBe('required');
  });

  it('a result schema that does not accept the result type is a compile error', () => {
    const good = op<{ n: number }>()({ summary: 's', input: z.strictObject({}), result: z.object({ n: z.number() }), callers: ['console'], reason: 'none' });
    // @ts-expect-error — `n` is a number in the type, a string in the schema
    const bad = op<{ n: number }>()({ summary: 's', input: z.strictObject({}), result: z.object({ n: z.string() }), callers: ['console'], reason: 'none' });
    expect([good.summary, bad.summary]).toEqual(['s', 's']);
  });
});
