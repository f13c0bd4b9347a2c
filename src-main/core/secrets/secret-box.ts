/**
 * Secrets at rest: values Gaffer must store but nobody reading the database file may read
 * (webhook URLs with their tokens, managed agents' environment — API keys).
 *
 * Invariants:
 * 1. A sealed value is `gfs1:` + base64url(iv ‖ ciphertext ‖ tag): AES-256-GCM with a fresh
 *    12-byte iv per value and the value's purpose (`webhook.url`, `managed.env`) as associated
 *    data, so a value copied into another field does not open there.
 * 2. Opening never returns garbage: a wrong key, a damaged value or a value sealed for another
 *    purpose throws a `SecretsError` (`unavailable`, detail `{ secretsKey: 'damaged' }`) naming
 *    what could not be opened; the key itself is never in a message.
 * 3. The key is 32 bytes from a `KeyProvider` (keys.ts), asked once, when the box is made.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { SecretsError } from './errors';

export const SEALED_PREFIX = 'gfs1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** What a sealed value is for (invariant 1). */
export type SecretPurpose = 'webhook.url' | 'webhook.secret' | 'managed.env';

export function isSealed(value: string): boolean {
  return value.startsWith(SEALED_PREFIX);
}

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== KEY_BYTES) throw new SecretsError('damaged', `a secrets key is ${KEY_BYTES} bytes; this one has ${key.length}`);
    this.key = Buffer.from(key);
  }

  seal(plain: string, purpose: SecretPurpose): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url');
  }

  /** The plain value (invariant 2); `what` names it in the error ("webhook wh_1's URL"). */
  open(sealed: string, purpose: SecretPurpose, what: string): string {
    if (!isSealed(sealed)) throw new SecretsError('damaged', `${what} is stored without its seal (${SEALED_PREFIX}…); it was changed outside Gaffer`);
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
    if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretsError('damaged', `${what} cannot be decrypted: the stored value is cut short`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(purpose, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretsError('damaged', `${what} cannot be decrypted with this data directory's secrets key: the key was replaced, or the stored value was changed outside Gaffer`);
    }
  }
}
