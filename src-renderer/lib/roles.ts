/** Role names as the scheduler accepts them: the rule is the protocol's own (`roleName`). */
import { roleName } from '../../src-main/common/schemas';

/** Why a role name is refused, or null when it is a valid one. */
export function roleProblem(role: string): string | null {
  return roleName.safeParse(role).success ? null : 'A role is 1–64 letters, digits, "_", "-" or ".", starting with a letter or digit.';
}
