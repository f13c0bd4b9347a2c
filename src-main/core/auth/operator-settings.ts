/**
 * The operator's own preferences that change what the console and the HTTP API accept, stored as
 * one `settings` row (`operator.settings`). Today one: whether an action the catalogue declares
 * with a required reason may go without one (a solo operator, the default) — it is then audited
 * with the reason "no reason given" (common/ops/reason-policy.ts applies it).
 *
 * Invariants:
 * 1. A change is audited (`operator.settings`, with its reason when given) in its own transaction.
 * 2. A row written by an older version (or none at all) reads as the defaults.
 */
import { z } from 'zod';
import type { OperatorSettings } from '../../common/ops/reason-policy';
import { actorName, reason } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';

const KEY = 'operator.settings';
const setRequireReasonInput = z.strictObject({ on: z.boolean(), reason: reason.optional(), actor: actorName });

export class OperatorSettingsStore {
  private readonly row: SettingsRow<OperatorSettings>;

  constructor(private readonly ctx: CoreContext) {
    this.row = settingsRow(ctx.db, KEY);
  }

  read(): OperatorSettings {
    const stored = this.row.read() ?? {};
    return { requireReason: stored.requireReason ?? false };
  }

  /** Turns "require a reason for actions" on or off (audited as `operator.settings`). */
  setRequireReason(input: unknown): OperatorSettings {
    const { on, reason: why, actor } = parseOrThrow(setRequireReasonInput, input, 'require a reason');
    return this.ctx.store.write(() => {
      const s = this.read();
      const next: OperatorSettings = { ...s, requireReason: on };
      this.row.write(next);
      this.ctx.audit.append({ type: 'operator.settings', actor, subject: 'settings:operator', detail: { ...(why ? { reason: why } : {}), requireReason: { from: s.requireReason, to: on } } });
      return next;
    });
  }
}
