/**
 * Secrets at rest (PROTOCOL §17, issue 25 item 14): webhook URLs and managed agents' environment
 * are stored sealed (secret-box.ts) with a key the shell's `KeyProvider` keeps (keys.ts).
 *
 * Invariants:
 * 1. At start, before any service reads a secret: the key is loaded, and checked against the key
 *    check the database keeps (`settings` row `secrets`: an HMAC of a fixed text under the key, which
 *    says nothing about the key). A database that holds sealed values gets no new key: a missing
 *    key is `missing`, another key is `wrong` — a clear error at start, never garbage later.
 * 2. Values stored in clear by an earlier version are sealed at start by their owners
 *    (`sealClearValues` of notify/settings.ts and managed/definitions.ts), in one transaction with
 *    `secure_delete` on, then the WAL is checkpointed and truncated: afterwards neither the database
 *    file nor its WAL holds them in clear (free pages from before this version excepted: see
 *    docs/operator-guide.md). Running it again finds nothing to seal.
 */
import { createHmac } from 'node:crypto';
import type { Db } from '../db/open';
import { settingsRow } from '../db/settings-row';
import { SecretsError } from './errors';
import type { KeyProvider } from './keys';
import { SecretBox, SEALED_PREFIX } from './secret-box';
import { holdsMarker, insertKeyCheckIfAbsent, truncateWal, withSecureDelete } from './store';

export { SecretBox, isSealed, type SecretPurpose } from './secret-box';
export { SecretsError, type SecretsKeyProblem } from './errors';
export { fileKey, keychainKey, memoryKey, KEY_FILE, KEYCHAIN_FILE, type KeyProvider, type KeyWrapper } from './keys';

interface SecretsRow {
  keyCheck: string;
}

const checkOf = (key: Buffer) => createHmac('sha256', key).update('gaffer secrets key check v1').digest('hex').slice(0, 32);

/** Whether anything in the database is sealed already (so its key must exist). */
const holdsSealedValues = (db: Db): boolean => holdsMarker(db, SEALED_PREFIX);

/** Invariant 1: the box every owner of a secret seals and opens with. */
export function openSecrets(db: Db, provider: KeyProvider): SecretBox {
  const row = settingsRow<SecretsRow>(db, 'secrets');
  const stored = row.read()?.keyCheck;
  const expected = stored !== undefined || holdsSealedValues(db);
  const key = provider.load(!expected);
  if (!key) {
    throw new SecretsError(
      'missing',
      `this database holds sealed secrets (webhook URLs, managed agents' environment) but their key is missing from ${provider.where}: restore it from a backup of the data directory; without it they cannot be read`,
    );
  }
  const check = checkOf(key);
  // Written only if absent, then read back: of processes opening one database at once, the first one's stands.
  if (stored === undefined) insertKeyCheckIfAbsent(db, JSON.stringify({ keyCheck: check }));
  if ((row.read()?.keyCheck ?? check) !== check) {
    throw new SecretsError('wrong', `the secrets key in ${provider.where} is not the one this database's secrets were sealed with: restore the right one from a backup of the data directory`);
  }
  return new SecretBox(key);
}

/** Invariant 2: `seal` runs the owners' sealing; returns what it sealed. */
export function sealClearValues<T extends Record<string, number>>(db: Db, seal: () => T): T {
  const sealed = withSecureDelete(db, seal);
  if (Object.values(sealed).some((n) => n > 0)) truncateWal(db);
  return sealed;
}
