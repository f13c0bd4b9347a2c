/**
 * Where the key of secrets at rest (secret-box.ts) is kept. The core is handed a `KeyProvider`;
 * the shells choose it:
 * - `fileKey(dataDir)`: `secrets.key`, a 0600 file in the (0700) data directory — headless Gaffer,
 *   and the desktop app where there is no OS keychain;
 * - `keychainKey(dataDir, wrapper)`: the key encrypted by the OS keychain (Electron's
 *   `safeStorage`) in `secrets.key.keychain`; the desktop app where it has one. A `secrets.key`
 *   left by a headless start is adopted (wrapped, then deleted), so the key is never in clear on
 *   disk; `{ toFile: true }` moves it back for a data directory a headless Gaffer must open;
 * - `memoryKey()`: a key that lives as long as the process (a database in memory, tests).
 *
 * Invariants:
 * 1. A key file is written whole or not at all (a temporary file, fsynced, renamed) with mode
 *    0600; an existing one with a wider mode is narrowed.
 * 2. `load(false)` never makes a key: when the database already holds sealed values, a missing key
 *    is an error (secrets.ts), not a fresh key that would open nothing.
 * 3. Every failure is a `SecretsError` saying where the key was looked for, never the key.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { SecretsError } from './errors';
import { KEY_BYTES } from './secret-box';

export interface KeyProvider {
  /** Where the key is kept, for messages: "the file /data/secrets.key". */
  readonly where: string;
  /** The key; when there is none: a new one if `create`, else undefined (invariant 2). */
  load(create: boolean): Buffer | undefined;
}

/** What the OS keychain does for the desktop app (Electron's safeStorage). */
export interface KeyWrapper {
  /** For messages: "the OS keychain (gnome_libsecret)". */
  readonly name: string;
  wrap(plain: Buffer): Buffer;
  unwrap(wrapped: Buffer): Buffer;
}

export const KEY_FILE = 'secrets.key';
export const KEYCHAIN_FILE = 'secrets.key.keychain';

/**
 * Invariant 1. `exclusive`: never replaces an existing file (two processes making a key at once:
 * the first one's stays, the other reads it) — returns false when one was there.
 */
function writePrivate(file: string, data: Buffer | string, exclusive = false): boolean {
  const tmp = `${file}.tmp-${process.pid}`;
  const fd = fs.openSync(tmp, 'w', 0o600);
  try {
    fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (exclusive) {
    try {
      fs.linkSync(tmp, file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return false;
    } finally {
      fs.rmSync(tmp, { force: true });
    }
  } else fs.renameSync(tmp, file);
  try {
    const dir = fs.openSync(path.dirname(file), 'r');
    fs.fsyncSync(dir);
    fs.closeSync(dir);
  } catch {
    /* a directory cannot be fsynced on every platform */
  }
  return true;
}

function readPrivate(file: string): Buffer | undefined {
  let st: fs.Stats;
  try {
    st = fs.statSync(file);
  } catch {
    return undefined;
  }
  if ((st.mode & 0o077) !== 0 && process.platform !== 'win32') fs.chmodSync(file, 0o600);
  return fs.readFileSync(file);
}

function decodeKey(text: string, file: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64') !== text.trim()) {
    throw new SecretsError('damaged', `the secrets key file ${file} is damaged (not ${KEY_BYTES} bytes in base64): restore it from a backup`);
  }
  return key;
}

export function fileKey(dataDir: string): KeyProvider {
  const file = path.join(dataDir, KEY_FILE);
  return {
    where: `the file ${file}`,
    load(create) {
      const raw = readPrivate(file);
      if (raw) return decodeKey(raw.toString('utf8'), file);
      if (fs.existsSync(path.join(dataDir, KEYCHAIN_FILE))) {
        throw new SecretsError(
          'locked',
          `the secrets key of ${dataDir} is kept in the desktop app's OS keychain (${KEYCHAIN_FILE}), which this Gaffer cannot read: ` +
            'start the desktop app, or start it once with --secrets-key-file to keep the key in a 0600 file a headless Gaffer can read',
        );
      }
      if (!create) return undefined;
      const key = randomBytes(KEY_BYTES);
      if (writePrivate(file, `${key.toString('base64')}\n`, true)) return key;
      return decodeKey(readPrivate(file)!.toString('utf8'), file); // another process made it first
    },
  };
}

export function keychainKey(dataDir: string, wrapper: KeyWrapper, opts: { toFile?: boolean } = {}): KeyProvider {
  const wrappedFile = path.join(dataDir, KEYCHAIN_FILE);
  const plain = fileKey(dataDir);
  const plainFile = path.join(dataDir, KEY_FILE);
  const unwrap = (): Buffer | undefined => {
    const raw = readPrivate(wrappedFile);
    if (!raw) return undefined;
    let key: Buffer;
    try {
      key = wrapper.unwrap(raw);
    } catch (e) {
      throw new SecretsError('locked', `${wrapper.name} did not give back the secrets key of ${dataDir} (${e instanceof Error ? e.message : String(e)}): unlock it, or restore ${KEY_FILE} from a backup`);
    }
    if (key.length !== KEY_BYTES) throw new SecretsError('damaged', `the secrets key kept by ${wrapper.name} (${wrappedFile}) is damaged: restore ${KEY_FILE} from a backup`);
    return key;
  };
  if (opts.toFile) {
    return {
      where: plain.where,
      load(create) {
        const key = unwrap();
        if (!key) return plain.load(create);
        writePrivate(plainFile, `${key.toString('base64')}\n`);
        fs.rmSync(wrappedFile, { force: true });
        return key;
      },
    };
  }
  return {
    where: `${wrapper.name} (${wrappedFile})`,
    load(create) {
      const kept = unwrap();
      if (kept) {
        fs.rmSync(plainFile, { force: true }); // left by a start interrupted while adopting it
        return kept;
      }
      // Adopt a key a headless start left in a file, or make one: either way only its wrapped form stays.
      const key = fs.existsSync(plainFile) ? plain.load(false)! : create ? randomBytes(KEY_BYTES) : undefined;
      if (!key) return undefined;
      writePrivate(wrappedFile, wrapper.wrap(key));
      fs.rmSync(plainFile, { force: true });
      return key;
    },
  };
}

export function memoryKey(): KeyProvider {
  const key = randomBytes(KEY_BYTES);
  return { where: 'memory', load: () => key };
}
