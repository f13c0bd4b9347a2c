/** Checks a "done when…" declaration beyond its shape: every `output` schema must compile. */
import { GafferError } from '../../common/errors';
import type { VerifySpec } from '../../common/verify';
import { compileSchema } from './checks';

export function assertVerifiable(spec: VerifySpec): void {
  spec.checks.forEach((c, i) => {
    if (c.kind !== 'output') return;
    try {
      compileSchema(c.schema);
    } catch (e) {
      throw new GafferError('bad_request', `check “${c.name}”: its schema is not a JSON Schema Gaffer can use: ${e instanceof Error ? e.message : String(e)}`, {
        field: `verify.checks.${i}.schema`,
      });
    }
  });
}
