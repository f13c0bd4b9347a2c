/** The one error of secrets at rest: `unavailable`, with a stable reason in `detail.secretsKey`. */
import { GafferError } from '../../common/errors';

/**
 * - `missing`: the database holds sealed secrets and their key is gone;
 * - `wrong`: a key is there, but not the one the database's secrets were sealed with;
 * - `locked`: the key is kept where this shell cannot read it (the desktop app's OS keychain);
 * - `damaged`: the key file or a stored value is not what Gaffer wrote.
 */
export type SecretsKeyProblem = 'missing' | 'wrong' | 'locked' | 'damaged';

export class SecretsError extends GafferError {
  constructor(
    readonly problem: SecretsKeyProblem,
    message: string,
  ) {
    super('unavailable', message, { secretsKey: problem });
    this.name = 'SecretsError';
  }
}
