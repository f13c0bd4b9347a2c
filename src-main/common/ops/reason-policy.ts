/**
 * The reason policy: the one place where the operator's "Require a reason for actions" setting
 * meets the catalogue's reason rule. Both doors of an operator action call it on the raw
 * arguments before they are parsed with the entry's schema: the console's method table
 * (server/console/methods.ts) and the HTTP API (server/api-v1.ts, the body of a catalogue route).
 *
 * With the setting off (the default, a solo operator):
 * - an operation declared `required` takes a missing or blank reason as "no reason given", and is
 *   audited with those words;
 * - an operation declared `optional` takes a blank reason as none (a console dialog sends what was
 *   typed; an empty note must not become the answer to an agent's question).
 * With it on, nothing is touched: a missing reason is the schema's `bad_request`, and nothing runs.
 */
import type { ReasonRule } from './define';

export interface OperatorSettings {
  /** On: every action declared with a required reason demands one. Off (default): optional. */
  requireReason: boolean;
}

/** The reason recorded for an action whose reason the operator left out. */
export const NO_REASON_GIVEN = 'no reason given';

/** What the policy needs of a catalogue entry. */
export interface ReasonDeclared {
  reason: ReasonRule;
  reasonField?: string;
}

const blank = (v: unknown): boolean => v === undefined || (typeof v === 'string' && v.trim() === '');

/** The arguments to parse: `args` itself, or a copy with the reason filled in or dropped. */
export function applyReasonPolicy(o: ReasonDeclared, args: unknown, requireReason: boolean): unknown {
  if (requireReason || o.reason === 'none') return args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args;
  const field = o.reasonField ?? 'reason';
  const a = args as Record<string, unknown>;
  if (!blank(a[field])) return args;
  if (o.reason === 'required') return { ...a, [field]: NO_REASON_GIVEN };
  if (!(field in a)) return args;
  const { [field]: _blank, ...rest } = a;
  return rest;
}
