/**
 * One declaration per operation: what an operator (or the console, or an agent) can ask Gaffer to
 * do, declared once with its input schema, its result schema, who may call it, whether it needs a
 * reason and its HTTP route. The console's method table, the HTTP router, the OpenAPI document, the
 * MCP operator tools and the renderer's API client type are derived from these entries
 * (docs/architecture.md, "Operation catalogue").
 *
 * Invariants:
 * 1. `op<R>()` checks at compile time that the result schema accepts every value of the result type
 *    `R` (the type the handlers return and the renderer reads): the documented schema cannot name a
 *    field with another type than the code produces. The GET routes' replies are also validated
 *    against it at run time (ops-replies.test.ts).
 * 2. `reason` is the one answer for every surface: the console's input and each HTTP body that
 *    carries the reason agree with it (ops.test.ts checks the schemas).
 */
import type { z } from 'zod';

/**
 * Who may call an operation:
 * - `console`: the operator's console session (Electron IPC or the browser with the console token);
 * - `operator`: a holder of the operator token over `/api/v1` (curl, scripts, `gaffer mcp --operator`);
 * - `agent`: an agent with its agent token.
 */
export type Caller = 'console' | 'operator' | 'agent';

/** Whether the operation takes a reason (audited with the change): one answer on every surface. */
export type ReasonRule = 'required' | 'optional' | 'none';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An HTTP route of an operation (relative to `/api/v1`). */
export interface RestRoute {
  method: HttpMethod;
  /** `/tasks/:id/release`. */
  path: string;
  /** This route's own summary, when it differs from the operation's (a second route of it). */
  summary?: string;
  description?: string;
  /** Success replies: status → description (default `{200: 'OK'}`). */
  status?: Record<number, string>;
  /**
   * The JSON body of a success reply when it is not the result itself (the HTTP API wraps most
   * results: `{task}`, `{job}`, …). Null: the reply is not JSON (`mediaTypes` says what it is).
   */
  response?: z.ZodType | null;
  /** Media types of a success reply that is not `application/json` (an export stream, a download). */
  mediaTypes?: string[];
}

export interface OpSpec<I extends z.ZodType, S extends z.ZodType, C extends Caller = Caller> {
  /** One line, for a person or a model reading the API reference (the OpenAPI summary). */
  summary: string;
  /** What a caller gives (the console's argument object). */
  input: I;
  /** What it answers (the console's result; the HTTP reply unless `rest.response` says otherwise). */
  result: S;
  callers: readonly C[];
  reason: ReasonRule;
  /** The input field that carries the reason when it is not `reason` (`note` on a run decision). */
  reasonField?: string;
  /** Its HTTP route(s), if any. */
  rest?: readonly RestRoute[];
}

/** A catalogue entry: its spec, typed with the result type `R` the handlers return. */
export interface Op<I extends z.ZodType = z.ZodType, R = unknown, C extends Caller = Caller> extends OpSpec<I, z.ZodType, C> {
  /** Type only: the result type (never set at run time). */
  readonly __result?: R;
}

/**
 * Declares an operation whose handlers return `R`. The result schema must accept every `R`
 * (invariant 1): a mismatch is a compile error at the entry.
 */
export function op<R>() {
  return <I extends z.ZodType, S extends z.ZodType, const C extends Caller>(
    spec: OpSpec<I, S, C>,
    ..._check: [R] extends [z.output<S>] ? [] : ['the result schema does not accept the result type']
  ): Op<I, R, C> => spec as unknown as Op<I, R, C>;
}

export type OpResult<O> = O extends Op<z.ZodType, infer R, Caller> ? R : never;
export type OpInput<O> = O extends Op<infer I, unknown, Caller> ? z.input<I> : never;
export type OpParsed<O> = O extends Op<infer I, unknown, Caller> ? z.output<I> : never;

/** The routes of an operation (none when it has no HTTP route). */
export function restRoutes(o: Op): readonly RestRoute[] {
  return o.rest ?? [];
}
