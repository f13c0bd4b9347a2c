/**
 * Secrets at rest (issue 25 item 14) and the private data directory (PROTOCOL §17): webhook URLs
 * and managed agents' environment are sealed in the database file, values an earlier version
 * stored in clear are sealed at start, reads return what was given, and a missing or wrong key is
 * a clear error at start, never garbage.
 */
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../common/clock';
import { createCore, type Core } from '../create-core';
import { LogStore } from '../logs/log-store';
import { tempDir } from '../tests/test-core';
import { fileKey, isSealed, keychainKey, KEY_FILE, KEYCHAIN_FILE, SecretBox, SecretsError, type KeyWrapper } from '.';

const WEBHOOK_SECRET = 'xoxb-WEBHOOK-SECRET-7f3a9c';
const API_KEY = 'sk-API-KEY-SECRET-42b8e1';
const operator = { actor: 'operator:test' };
const posix = process.platform !== 'win32';

const open: Core[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

function core(dir: string, extra: Parameters<typeof createCore>[0] = {}): Core {
  const c = createCore({ clock: new ManualClock(), dataDir: dir, ...extra });
  open.push(c);
  return c;
}

function close(c: Core): void {
  open.splice(open.indexOf(c), 1);
  c.close();
}

/** Every byte Gaffer keeps for the database: the file and its WAL. */
function rawDatabase(dir: string): string {
  return ['gaffer.db', 'gaffer.db-wal'].map((f) => (fs.existsSync(path.join(dir, f)) ? fs.readFileSync(path.join(dir, f)).toString('latin1') : '')).join('');
}

function saveSecrets(c: Core): string {
  c.attention.notifications.put({ webhooks: [{ url: `https://hooks.example.com/services/${WEBHOOK_SECRET}`, events: ['needs_human'] }], ...operator });
  return c.managed.create({ name: 'coder', role: 'dev', command: ['claude', '-p', 'x'], env: { ANTHROPIC_API_KEY: API_KEY, MODE: 'fast' } }, operator).id;
}

describe('SecretBox', () => {
  const box = new SecretBox(randomBytes(32));

  it('seals to a fresh value each time and opens it for the same purpose only', () => {
    const a = box.seal('hello', 'webhook.url');
    expect(isSealed(a)).toBe(true);
    expect(a).not.toContain('hello');
    expect(box.seal('hello', 'webhook.url')).not.toBe(a);
    expect(box.open(a, 'webhook.url', 'x')).toBe('hello');
    expect(() => box.open(a, 'managed.env', 'x')).toThrow(SecretsError);
  });

  it('a wrong key, a changed value or a clear value is a clear error, never garbage', () => {
    const a = box.seal('hello', 'webhook.url');
    const other = new SecretBox(randomBytes(32));
    expect(() => other.open(a, 'webhook.url', "webhook wh_1's URL")).toThrow(/webhook wh_1's URL cannot be decrypted with this data directory's secrets key/);
    const flipped = a.slice(0, -3) + (a.at(-3) === 'A' ? 'B' : 'A') + a.slice(-2);
    expect(() => box.open(flipped, 'webhook.url', 'x')).toThrow(SecretsError);
    expect(() => box.open('https://clear.example', 'webhook.url', 'x')).toThrow(/stored without its seal/);
    try {
      other.open(a, 'webhook.url', 'x');
    } catch (e) {
      expect(e).toMatchObject({ code: 'unavailable', status: 503, detail: { secretsKey: 'damaged' } });
    }
  });
});

describe('secrets at rest', () => {
  it('webhook URLs and managed agents\' environment are not in the database file; reads return what was given', () => {
    const dir = tempDir();
    const c = core(dir);
    const id = saveSecrets(c);
    expect(c.attention.notifications.stored().webhooks[0]!.url).toBe(`https://hooks.example.com/services/${WEBHOOK_SECRET}`);
    expect(c.attention.notifications.view().webhooks[0]!.url).not.toContain(WEBHOOK_SECRET); // masked, as before
    expect(c.managed.get(id).env).toEqual({ ANTHROPIC_API_KEY: API_KEY, MODE: 'fast' });
    const raw = rawDatabase(dir);
    expect(raw).not.toContain(WEBHOOK_SECRET);
    expect(raw).not.toContain(API_KEY);
    // Across a restart, with the same key file.
    close(c);
    const again = core(dir);
    expect(again.managed.get(id).env.ANTHROPIC_API_KEY).toBe(API_KEY);
    expect(again.attention.notifications.webhook(again.attention.notifications.view().webhooks[0]!.id)!.url).toContain(WEBHOOK_SECRET);
  });

  it('values an earlier version stored in clear are sealed at start, once; the file and WAL keep no clear copy', () => {
    const dir = tempDir();
    const c = core(dir);
    const id = c.managed.create({ name: 'coder', role: 'dev', command: ['claude'] }, operator).id;
    close(c);
    // What an earlier version wrote: clear JSON in both places.
    const db = new Database(path.join(dir, 'gaffer.db'));
    db.prepare('UPDATE managed_agents SET env = ? WHERE id = ?').run(JSON.stringify({ ANTHROPIC_API_KEY: API_KEY }), id);
    const webhooks = [{ id: 'wh_old', name: null, url: `https://hooks.example.com/${WEBHOOK_SECRET}`, events: ['needs_human'], format: 'json', enabled: true }];
    db.prepare("INSERT INTO settings (key, value) VALUES ('notifications', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(JSON.stringify({ webhooks }));
    db.close();
    expect(rawDatabase(dir)).toContain(API_KEY);

    const upgraded = core(dir);
    expect(upgraded.managed.get(id).env).toEqual({ ANTHROPIC_API_KEY: API_KEY });
    expect(upgraded.attention.notifications.webhook('wh_old')!.url).toBe(`https://hooks.example.com/${WEBHOOK_SECRET}`);
    const rows = upgraded.db.prepare<[], { env: string }>('SELECT env FROM managed_agents').all();
    expect(rows.every((r) => isSealed(r.env))).toBe(true);
    const audited = () => upgraded.auditQuery.query({ type: 'secrets.sealed', limit: 10 }).items;
    expect(audited().map((a) => a.detail)).toEqual([{ webhookUrls: 1, managedEnvs: 1 }]);
    expect(rawDatabase(dir)).not.toContain(API_KEY);
    expect(rawDatabase(dir)).not.toContain(WEBHOOK_SECRET);
    close(upgraded);
    // Idempotent: nothing left to seal, nothing audited again.
    const third = core(dir);
    expect(third.auditQuery.query({ type: 'secrets.sealed', limit: 10 }).items).toHaveLength(1);
    expect(third.managed.get(id).env.ANTHROPIC_API_KEY).toBe(API_KEY);
  });

  it('a missing, replaced or damaged key is a clear error at start, and the database is left as it was', () => {
    const dir = tempDir();
    const c = core(dir);
    saveSecrets(c);
    close(c);
    const keyFile = path.join(dir, KEY_FILE);
    const key = fs.readFileSync(keyFile);
    const before = rawDatabase(dir);
    const startError = () => {
      try {
        core(dir);
      } catch (e) {
        return e as SecretsError;
      }
      throw new Error('started');
    };

    fs.rmSync(keyFile);
    expect(startError()).toMatchObject({ code: 'unavailable', detail: { secretsKey: 'missing' }, message: expect.stringContaining(`missing from the file ${keyFile}`) });
    expect(fs.existsSync(keyFile)).toBe(false); // no fresh key that would open nothing

    fs.writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    expect(startError()).toMatchObject({ detail: { secretsKey: 'wrong' }, message: expect.stringMatching(/not the one this database's secrets were sealed with/) });

    fs.writeFileSync(keyFile, 'not a key\n');
    expect(startError()).toMatchObject({ detail: { secretsKey: 'damaged' } });
    expect(rawDatabase(dir)).toBe(before);

    fs.writeFileSync(keyFile, key);
    expect(core(dir).managed.list()[0]!.env.ANTHROPIC_API_KEY).toBe(API_KEY);
  });

  it('the OS keychain: a key file is adopted (then deleted), a headless start is told where the key is, and it can be moved back', () => {
    const dir = tempDir();
    const c = core(dir);
    const id = saveSecrets(c);
    close(c);
    const wrapper: KeyWrapper = {
      name: 'the test keychain',
      wrap: (k) => Buffer.concat([Buffer.from('wrapped:'), Buffer.from(k.map((b) => b ^ 0x5a))]),
      unwrap: (w) => Buffer.from(w.subarray(8).map((b) => b ^ 0x5a)),
    };
    const desktop = core(dir, { secretsKey: keychainKey(dir, wrapper) });
    expect(desktop.managed.get(id).env.ANTHROPIC_API_KEY).toBe(API_KEY);
    close(desktop);
    expect(fs.existsSync(path.join(dir, KEY_FILE))).toBe(false);
    expect(fs.readFileSync(path.join(dir, KEYCHAIN_FILE)).subarray(0, 8).toString()).toBe('wrapped:');
    expect(() => core(dir)).toThrow(/kept in the desktop app's OS keychain .* --secrets-key-file/);
    const locked = () => keychainKey(dir, { ...wrapper, unwrap: () => { throw new Error('the keyring is locked'); } }).load(false);
    expect(locked).toThrow(/the test keychain did not give back the secrets key .*the keyring is locked/);
    close(core(dir, { secretsKey: keychainKey(dir, wrapper, { toFile: true }) }));
    expect(fs.existsSync(path.join(dir, KEYCHAIN_FILE))).toBe(false);
    expect(core(dir, { secretsKey: fileKey(dir) }).managed.get(id).env.ANTHROPIC_API_KEY).toBe(API_KEY);
  });
});

describe.skipIf(!posix)('the data directory is private (PROTOCOL §17)', () => {
  it('0700, and every file Gaffer keeps there 0600 — also those an older version left wider', () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o755);
    fs.writeFileSync(path.join(dir, 'gaffer.pid'), '1\n', { mode: 0o644 });
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'the operator\'s own file\n', { mode: 0o644 });
    fs.chmodSync(path.join(dir, 'gaffer.pid'), 0o644);
    fs.chmodSync(path.join(dir, 'notes.txt'), 0o644);
    const c = core(dir);
    saveSecrets(c);
    c.start();
    // A log segment, as the log worker makes them (the worker only starts one on the first log frame).
    const logs = new LogStore(path.join(dir, 'logs'), Date.now());
    const modes = () => {
      const out: Record<string, string> = {};
      const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
          const p = path.join(d, e.name);
          out[path.relative(dir, p)] = (fs.statSync(p).mode & 0o777).toString(8);
          if (e.isDirectory()) walk(p);
        }
      };
      walk(dir);
      return out;
    };
    const live = modes();
    expect(Object.keys(live).some((f) => f.startsWith(`logs${path.sep}seg-`))).toBe(true);
    expect(live).toMatchObject({ 'gaffer.db': '600', 'gaffer.db-wal': '600', 'gaffer.db-shm': '600', 'gaffer.lock': '600', 'gaffer.pid': '600', 'secrets.key': '600' });
    expect(Object.entries(live).filter(([f, m]) => f !== 'notes.txt' && m !== (fs.statSync(path.join(dir, f)).isDirectory() ? '700' : '600'))).toEqual([]);
    expect(live['notes.txt']).toBe('644'); // not Gaffer's: left alone
    expect((fs.statSync(dir).mode & 0o777).toString(8)).toBe('700');
    logs.close();
    close(c);
    expect(Object.entries(modes()).filter(([f, m]) => f !== 'notes.txt' && m !== (fs.statSync(path.join(dir, f)).isDirectory() ? '700' : '600'))).toEqual([]);
  });

  it('a shared directory (sticky bit, like /tmp) given as the data directory keeps its mode; Gaffer\'s files in it are still 0600', () => {
    const dir = tempDir();
    fs.chmodSync(dir, 0o1777);
    close(core(dir));
    expect((fs.statSync(dir).mode & 0o7777).toString(8)).toBe('1777');
    expect((fs.statSync(path.join(dir, 'gaffer.db')).mode & 0o777).toString(8)).toBe('600');
  });
});
