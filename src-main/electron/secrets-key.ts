/**
 * Where the desktop app keeps the key of secrets at rest (core/secrets): in the OS keychain through
 * Electron's `safeStorage` where there is one (macOS Keychain, Windows DPAPI, libsecret or KWallet
 * on Linux), else in the 0600 file the headless shell uses. On Linux `safeStorage` falls back to a
 * fixed password (`basic_text`) without a keyring: that is no keychain, so the file is used.
 * `--secrets-key-file` keeps (or moves) the key in the file, for a data directory a headless
 * Gaffer must also open.
 */
import type { SafeStorage } from 'electron';
import { fileKey, keychainKey, type KeyProvider } from '../core/secrets';

type Storage = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString'> & { getSelectedStorageBackend?: () => string };

export function desktopSecretsKey(dataDir: string, storage: Storage | undefined, platform: NodeJS.Platform, opts: { toFile: boolean }): KeyProvider {
  const backend = platform === 'linux' ? storage?.getSelectedStorageBackend?.() : undefined;
  const keychain = !!storage && storage.isEncryptionAvailable() && backend !== 'basic_text' && backend !== 'unknown';
  if (!keychain) return fileKey(dataDir);
  return keychainKey(
    dataDir,
    {
      name: `the OS keychain (${backend ?? platform})`,
      wrap: (key) => storage.encryptString(key.toString('base64')),
      unwrap: (wrapped) => Buffer.from(storage.decryptString(wrapped), 'base64'),
    },
    { toFile: opts.toFile },
  );
}
