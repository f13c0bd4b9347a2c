/** A test core with the console method table over it, and the refusal check the console methods' tests share. */
import { expect } from 'vitest';
import type { ErrorBody } from '../../common/errors';
import { auditCount, makeTestCore, type TestCore } from '../../core/tests/test-core';
import { createConsoleMethods, type ConsoleContext, type ConsoleMethods } from '../console/methods';

/** A fresh test core and its console methods (port 7311, version 1.2.3 unless given). */
export function consoleUnderTest(ctx: Pick<ConsoleContext, 'actor'> & Partial<ConsoleContext>): { core: TestCore; m: ConsoleMethods } {
  const core = makeTestCore();
  return { core, m: createConsoleMethods(core, { port: 7311, dataDir: core.dir, version: '1.2.3', ...ctx }) };
}

/**
 * Dispatches `method(args)` and expects it refused with `code`, having changed nothing `digest`
 * sees and audited nothing. Returns the error. The check runs with "Require a reason for actions"
 * on: the catalogue's strict rule (with it off, a missing reason is filled in instead — see
 * common/ops/reason-policy.ts and its tests).
 */
export async function expectRefusedUnchanged(
  m: ConsoleMethods,
  core: TestCore,
  digest: () => string,
  method: unknown,
  args: unknown,
  code = 'bad_request',
): Promise<ErrorBody> {
  if (!core.operatorSettings.read().requireReason) core.operatorSettings.setRequireReason({ on: true, actor: 'test' });
  const before = digest();
  const audits = auditCount(core);
  const reply = await m.dispatch(method, args);
  expect(reply.ok, `${String(method)} ${JSON.stringify(args)?.slice(0, 120)}: ${JSON.stringify(reply)}`).toBe(false);
  if (reply.ok) throw new Error('unreachable');
  expect(reply.error.code).toBe(code);
  expect(typeof reply.error.message).toBe('string');
  expect(digest()).toBe(before);
  expect(auditCount(core)).toBe(audits);
  return reply.error;
}
