import type { z } from 'zod';
import { GafferError } from './errors';
import { assertWellFormedText } from './text';

/**
 * Parses `value` with `schema` or throws `bad_request` naming the first offending field. Every
 * string and key is checked to be storable text first (common/text.ts), whatever the schema says.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'input'): z.output<S> {
  assertWellFormedText(value, what);
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.slice(0, 5).map((i) => ({ path: i.path.join('.'), message: i.message }));
  const first = issues[0];
  const where = first && first.path ? ` at "${first.path}"` : '';
  throw new GafferError('bad_request', `invalid ${what}${where}: ${first?.message ?? 'invalid value'}`, { issues });
}
