/**
 * The operation catalogue: every operation, once (define.ts). Adding one is an entry in its area's
 * file, a handler (server/console/methods*.ts for the console, server/api/* for its HTTP route) and
 * the UI piece that calls it — docs/architecture.md, "Operation catalogue".
 */
import type { z } from 'zod';
import { attentionOps } from './attention';
import { auditOps } from './audit';
import type { Caller, Op, OpParsed, OpResult } from './define';
import { jobOps } from './jobs';
import { logOps } from './logs';
import { managedOps } from './managed';
import { signalOps } from './signals';
import { spendOps } from './spend';
import { statusOps } from './status';
import { taskOps } from './tasks';

export const OPS = {
  ...statusOps,
  ...taskOps,
  ...signalOps,
  ...auditOps,
  ...jobOps,
  ...attentionOps,
  ...spendOps,
  ...logOps,
  ...managedOps,
} as const;

export type OpName = keyof typeof OPS;
type Ops = typeof OPS;

/** The operations a caller may call (by its `callers`). */
export type OpsFor<C extends Caller> = { [K in OpName]: C extends CallersOf<Ops[K]> ? K : never }[OpName];
type CallersOf<O> = O extends Op<z.ZodType, unknown, infer C> ? C : never;
export type OpArgs<K extends OpName> = OpParsed<Ops[K]>;
export type OpReturn<K extends OpName> = OpResult<Ops[K]>;

export function opNamed(name: string): Op | undefined {
  return Object.prototype.hasOwnProperty.call(OPS, name) ? (OPS as Record<string, Op>)[name] : undefined;
}

/** Names of the operations `caller` may call, in catalogue order. */
export function opsFor(caller: Caller): string[] {
  return Object.entries(OPS as Record<string, Op>)
    .filter(([, o]) => o.callers.includes(caller))
    .map(([name]) => name);
}

export type { Caller, HttpMethod, Op, ReasonRule, RestRoute } from './define';
