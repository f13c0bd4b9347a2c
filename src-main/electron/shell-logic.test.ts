/**
 * The Electron shell's logic that does not need Electron: native-binding lookup, IPC sender
 * trust, navigation policy, tray counts, notification rate limiting, sleep/wake, export files,
 * and the CLI split. (Nothing here imports `electron`: its npm package would try to download
 * the binary.)
 */
import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleEvent, Dashboard } from '../common/console-api';
import { verifyExport } from '../core/audit/audit-export';
import { makeTestCore, onlineInstance, tempDir, type TestCore } from '../core/tests/test-core';
import { pulseMs } from '../core/time/gap-detector';
import { parseCli, splitKnownArgs } from '../server/cli';
import { startConsoleExport } from '../server/console/export';
import { EXPORT_SYNC_BYTES, writeExportFile } from './export-file';
import { devNativeBinding, osKey, resolveNativeBinding } from './native';
import { desktopAlerts } from './inbox-notify';
import { NotifyGate, type Note } from './notify-gate';
import { createPowerHandler } from './power';
import { relaunchWithoutTokens } from './relaunch';
import { desktopSecretsKey } from './secrets-key';
import { APP_ORIGIN, externalLinkAllowed, navigationAllowed, originOf, trustedSender } from './sender';
import { trayCounts, trayTooltip } from './tray-state';

let core: TestCore | undefined;
afterEach(() => {
  core?.close();
  core = undefined;
});

describe('native binding lookup', () => {
  const base = { env: {}, isPackaged: false, appPath: '/app', resourcesPath: '/res', platform: 'linux' as const, arch: 'x64' };
  it('dev: native/electron/<os>-<arch>; packaged: resources/native; env override first', () => {
    expect(osKey('darwin')).toBe('mac');
    expect(osKey('win32')).toBe('win');
    expect(devNativeBinding('/app', 'linux', 'x64')).toBe(path.join('/app', 'native', 'electron', 'linux-x64', 'better_sqlite3.node'));
    expect(resolveNativeBinding({ ...base, exists: () => true })).toEqual({ ok: true, path: devNativeBinding('/app', 'linux', 'x64') });
    expect(resolveNativeBinding({ ...base, isPackaged: true, exists: () => true })).toEqual({ ok: true, path: path.join('/res', 'native', 'better_sqlite3.node') });
    expect(resolveNativeBinding({ ...base, env: { GAFFER_NATIVE_BINDING: '/x/b.node' }, exists: (f) => f === '/x/b.node' })).toEqual({ ok: true, path: '/x/b.node' });
    const missing = resolveNativeBinding({ ...base, exists: () => false });
    expect(missing).toEqual({ ok: false, looked: [devNativeBinding('/app', 'linux', 'x64')] });
  });
});

describe('IPC sender trust and navigation', () => {
  const policy = { windowWebContentsId: 7, origins: [APP_ORIGIN, 'http://localhost:5173'] };
  it('only the main window, its top frame, our origin', () => {
    expect(trustedSender({ webContentsId: 7, frameUrl: 'app://gaffer/index.html#/jobs', isMainFrame: true }, policy)).toBe(true);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'http://localhost:5173/', isMainFrame: true }, policy)).toBe(true);
    expect(trustedSender({ webContentsId: 8, frameUrl: 'app://gaffer/index.html', isMainFrame: true }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'app://gaffer/index.html', isMainFrame: false }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'https://evil.example/', isMainFrame: true }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'app://evil/index.html', isMainFrame: true }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'file:///etc/passwd', isMainFrame: true }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: null, isMainFrame: true }, policy)).toBe(false);
    expect(trustedSender({ webContentsId: 7, frameUrl: 'app://gaffer/', isMainFrame: true }, { ...policy, windowWebContentsId: null })).toBe(false);
  });

  it('navigation stays inside the app; only https opens outside', () => {
    expect(originOf('app://gaffer/x')).toBe('app://gaffer');
    expect(navigationAllowed('app://gaffer/index.html#/audit', [APP_ORIGIN])).toBe(true);
    expect(navigationAllowed('https://example.com/', [APP_ORIGIN])).toBe(false);
    expect(navigationAllowed('javascript:alert(1)', [APP_ORIGIN])).toBe(false);
    expect(externalLinkAllowed('https://example.com/docs')).toBe(true);
    expect(externalLinkAllowed('http://example.com/')).toBe(false);
    expect(externalLinkAllowed('file:///etc/passwd')).toBe(false);
    expect(externalLinkAllowed('smb://host/share')).toBe(false);
  });
});

describe('tray counts', () => {
  const role = (r: Partial<Dashboard['roles'][number]> & { role: string }) => ({
    ready: 0, waiting: 0, inProgress: 0, blocked: 0, failed: 0, done: 0, onlineInstances: 1, oldestReadyAgeMs: null, ...r,
  });
  it('online / stuck roles / open in the inbox', () => {
    const d = {
      onlineInstances: 3,
      runsNeedingAttention: 2,
      inbox: { open: 5, snoozed: 2, critical: 1, byKind: {} },
      recoveryBoundS: 180,
      killSwitch: false,
      roles: [
        role({ role: 'dev', ready: 4, onlineInstances: 0, oldestReadyAgeMs: 1000 }), // nobody to take it
        role({ role: 'pm', ready: 1, onlineInstances: 2, oldestReadyAgeMs: 600_000 }), // waiting too long
        role({ role: 'qa', ready: 1, onlineInstances: 1, oldestReadyAgeMs: 5_000, blocked: 1, failed: 2 }),
      ],
    } as unknown as Dashboard;
    const c = trayCounts(d);
    expect(c).toEqual({ online: 3, stuck: 2, inbox: 5, critical: 1, killSwitch: false, stuckRoles: ['dev', 'pm'] });
    expect(trayTooltip(c)).toContain('3 online · 2 stuck · 5 in the inbox (1 critical)');
  });
});

describe('notification gate', () => {
  const alert = (level: 'info' | 'warning' | 'critical', title: string): ConsoleEvent => ({ type: 'alert', level, title, body: `${title} body` });
  it('rate-limits, summarises, puts critical first, ignores info', () => {
    let now = 0;
    const timers: Array<{ fn: () => void; at: number }> = [];
    const shown: Note[] = [];
    const gate = new NotifyGate({ now: () => now, setTimeout: (fn, ms) => timers.push({ fn, at: now + ms }), show: (n) => shown.push(n), minIntervalMs: 10_000 });
    gate.push([alert('info', 'Woke up')]);
    expect(shown).toEqual([]);
    gate.push([alert('warning', 'Lock expired')]);
    expect(shown).toEqual([{ title: 'Lock expired', body: 'Lock expired body', critical: false }]);
    now = 1000;
    gate.push([alert('warning', 'Lock expired (×3)'), alert('critical', 'Needs a human')]);
    expect(shown).toHaveLength(1);
    expect(timers).toHaveLength(1);
    now = timers[0]!.at;
    timers[0]!.fn();
    expect(shown[1]).toEqual({ title: 'Needs a human', body: 'Needs a human body (+1 more in Gaffer)', critical: true });
  });
});

describe('desktop notifications from the inbox', () => {
  const inbox = (action: 'raised' | 'repeated' | 'acked' | 'reopened', kind: 'needs_human' | 'stuck_queue', severity: 'critical' | 'warning' = 'critical'): ConsoleEvent => ({
    type: 'inbox.changed',
    itemId: 1,
    action,
    kind,
    severity,
    state: 'open',
    title: `${kind} title`,
    detail: `${kind} detail`,
  });
  const at = (hhmm: string) => Date.parse(`2026-11-30T${hhmm}:00.000Z`);

  it('a new or reopened item of a chosen kind notifies; folded occurrences, other changes and other kinds do not', () => {
    const desktop = { kinds: ['needs_human' as const], quietHours: null };
    const batch = [inbox('raised', 'needs_human'), inbox('repeated', 'needs_human'), inbox('acked', 'needs_human'), inbox('raised', 'stuck_queue', 'warning'), inbox('reopened', 'needs_human')];
    expect(desktopAlerts(batch, desktop, at('12:00'), 'UTC')).toEqual([
      { type: 'alert', level: 'critical', title: 'needs_human title', body: 'needs_human detail' },
      { type: 'alert', level: 'critical', title: 'Again: needs_human title', body: 'needs_human detail' },
    ]);
  });

  it('quiet hours (past midnight, in their zone) keep it quiet; the item waits in the inbox', () => {
    const desktop = { kinds: ['needs_human' as const], quietHours: { start: '22:00', end: '07:00' } };
    const ev = [inbox('raised', 'needs_human')];
    expect(desktopAlerts(ev, desktop, at('23:30'), 'UTC')).toEqual([]);
    expect(desktopAlerts(ev, desktop, at('06:59'), 'UTC')).toEqual([]);
    expect(desktopAlerts(ev, desktop, at('07:00'), 'UTC')).toHaveLength(1);
    expect(desktopAlerts(ev, desktop, at('21:59'), 'UTC')).toHaveLength(1);
    // 12:00 UTC is 21:00 in Tokyo, 23:30 UTC is 08:30 there.
    const tokyo = { ...desktop, quietHours: { start: '20:00', end: '08:00', timezone: 'Asia/Tokyo' } };
    expect(desktopAlerts(ev, tokyo, at('12:00'), 'UTC')).toEqual([]);
    expect(desktopAlerts(ev, tokyo, at('23:30'), 'UTC')).toHaveLength(1);
  });
});

describe('sleep and wake', () => {
  it('a long sleep is applied as a clock gap at resume: locks survive instead of expiring en masse', () => {
    core = makeTestCore({ lockWindowS: 600, heartbeatTimeoutS: 120 });
    core.start();
    const power = createPowerHandler(core);
    const inst = onlineInstance(core);
    core.tasks.create({ title: 't', role: 'dev' }, { actor: 'x' });
    const claimed = core.locks.claim({ instanceId: inst });
    const before = Date.parse(claimed.task!.lock!.expiresAt);
    power.suspend();
    core.clock.jump(3 * 3600_000); // asleep for three hours: no timers ran
    expect(power.resume()).toBe(3 * 3600_000);
    const after = core.tasks.get(claimed.task!.id);
    expect(Date.parse(after.lock!.expiresAt)).toBe(before + 3 * 3600_000);
    core.watchdog.sweep();
    expect(core.tasks.get(claimed.task!.id).status).toBe('in_progress');
    expect(core.instances.get(inst).status).toBe('online');
    expect(core.auditQuery.query({ type: 'clock.jump' }).items).toHaveLength(1);
    power.dispose();
  });

  it('short naps are ignored, and a gap the detector already applied is not applied twice', () => {
    core = makeTestCore();
    core.start();
    const power = createPowerHandler(core);
    power.suspend();
    core.clock.jump(2000);
    expect(power.resume()).toBe(0);
    power.suspend();
    core.clock.jump(3600_000);
    core.clock.advance(pulseMs(core.config)); // the detector's pulse noticed first
    expect(core.auditQuery.query({ type: 'clock.jump' }).items).toHaveLength(1);
    expect(power.resume()).toBe(0);
    expect(power.resume()).toBe(0); // resume without suspend
    expect(core.auditQuery.query({ type: 'clock.jump' }).items).toHaveLength(1);
    power.dispose();
  });
});

describe('export to a file (native save dialog target)', () => {
  it('streams to <file>.part, renames when complete, reports progress; the file verifies', async () => {
    core = makeTestCore();
    for (let i = 0; i < 2500; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'x' });
    const dir = tempDir('gaffer-export-');
    const file = path.join(dir, 'audit.jsonl');
    const progress: Array<{ rows: number; done: boolean }> = [];
    const r = await writeExportFile(startConsoleExport(core, { format: 'jsonl' }), file, { onProgress: (p) => progress.push(p), progressMs: 0 });
    expect(r).toEqual({ file, rows: 2500 });
    expect(fs.existsSync(`${file}.part`)).toBe(false);
    expect(progress.at(-1)).toMatchObject({ rows: 2500, done: true });
    expect(progress.length).toBeGreaterThan(2);
    const v = await verifyExport(fs.createReadStream(file), 'jsonl', { expectContiguous: true });
    expect(v).toMatchObject({ ok: true, rows: 2500, coverage: 'chain' });

    const csv = path.join(dir, 'audit.csv');
    expect(await writeExportFile(startConsoleExport(core, { format: 'csv', type: 'task.create', to: new Date(core.clock.now() + 1).toISOString() }), csv)).toEqual({ file: csv, rows: 2500 });
    expect((await verifyExport(fs.createReadStream(csv), 'csv')).ok).toBe(true);
  });

  it('syncs the file once syncEveryBytes are written unsynced, before writing more (invariant 4)', async () => {
    core = makeTestCore();
    const c = core;
    c.store.write(() => {
      for (let i = 0; i < 500; i++) c.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'x' }); // one commit
    });
    const dir = tempDir('gaffer-export-');
    const syncs = vi.spyOn(fs, 'fdatasync');
    try {
      // A sync after every chunk (200-row pages: 3 of them) …
      const file = path.join(dir, 'audit.jsonl');
      expect(await writeExportFile(startConsoleExport(core, { format: 'jsonl' }), file, { syncEveryBytes: 1 })).toEqual({ file, rows: 500 });
      expect(syncs.mock.calls.length).toBeGreaterThanOrEqual(3);
      expect((await verifyExport(fs.createReadStream(file), 'jsonl', { expectContiguous: true })).ok).toBe(true);
      // … and none for an export smaller than the default step.
      syncs.mockClear();
      expect(fs.statSync(file).size).toBeLessThan(EXPORT_SYNC_BYTES);
      await writeExportFile(startConsoleExport(core, { format: 'jsonl' }), path.join(dir, 'small.jsonl'));
      expect(syncs).not.toHaveBeenCalled();
    } finally {
      syncs.mockRestore();
    }
  });

  it('cancellation removes the partial file; bad filters fail before anything is written', async () => {
    core = makeTestCore();
    for (let i = 0; i < 3000; i++) core.tasks.create({ title: `t${i}`, role: 'dev' }, { actor: 'x' });
    const dir = tempDir('gaffer-export-');
    const file = path.join(dir, 'audit.jsonl');
    let n = 0;
    expect(await writeExportFile(startConsoleExport(core, { format: 'jsonl' }), file, { cancelled: () => ++n > 1 })).toBeNull();
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(() => startConsoleExport(core!, { format: 'xml' })).toThrow(/format/);
    expect(() => startConsoleExport(core!, { format: 'csv', bogus: 1 })).toThrow();
  });
});

describe('CLI split for Electron argv', () => {
  it('keeps Gaffer options, drops the app path and Chromium switches', () => {
    const argv = ['.', '--remote-debugging-port=0', '--port', '7400', '--inspect=0', '--data-dir=/tmp/g', '--lock-window-s', '60', '--no-sandbox', '--no-open'];
    const { known, other } = splitKnownArgs(argv);
    expect(known).toEqual(['--port', '7400', '--data-dir=/tmp/g', '--lock-window-s', '60', '--no-open']);
    expect(other).toEqual(['.', '--remote-debugging-port=0', '--inspect=0', '--no-sandbox']);
    const opts = parseCli(known, {});
    expect(opts).toMatchObject({ port: 7400, dataDir: '/tmp/g', config: { lockWindowS: 60 }, open: false });
  });
});

describe('PROTOCOL §17 in the desktop app', () => {
  const TOKEN = 'gfo_desktop-operator-token-0123456789';
  const secrets = (from: 'environment' | 'pipe') => ({ tokens: { GAFFER_OPERATOR_TOKEN: TOKEN }, from: { GAFFER_OPERATOR_TOKEN: from }, cleared: { ok: true, reason: null }, problems: [] });
  function fakeSpawn() {
    const pipe = new PassThrough();
    let handed = '';
    pipe.on('data', (d) => (handed += d));
    const child = Object.assign(new EventEmitter(), { stdio: [null, null, null, pipe], unref() {} }) as unknown as ChildProcess;
    const calls: Array<{ file: string; args: string[]; opts: any }> = [];
    return { calls, handed: () => handed, spawn: (file: string, args: string[], opts: any) => (calls.push({ file, args, opts }), child) };
  }

  it('started with the operator token in its environment: starts itself again with it on a pipe, then exits', async () => {
    const f = fakeSpawn();
    let exited: number | undefined;
    const env = { PATH: '/bin', GAFFER_OPERATOR_TOKEN: TOKEN, HOLDS_IT: `x${TOKEN}`, KEEP: '1' };
    const relaunched = relaunchWithoutTokens(secrets('environment'), { execPath: '/opt/Gaffer/gaffer', args: ['--port', '7312'], env, platform: 'linux', spawn: f.spawn, exit: (c) => (exited = c) });
    expect(relaunched).toBe(true);
    for (let i = 0; i < 100 && exited === undefined; i++) await new Promise((r) => setTimeout(r, 5));
    expect(exited).toBe(0);
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0]).toMatchObject({ file: '/opt/Gaffer/gaffer', args: ['--port', '7312'], opts: { detached: true, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] } });
    expect(f.calls[0]!.opts.env).toEqual({ PATH: '/bin', KEEP: '1', GAFFER_OPERATOR_TOKEN_FD: '3' });
    expect(f.handed()).toBe(TOKEN);
  });

  it('given the token on a pipe (npm start), or on Windows: no relaunch', () => {
    const f = fakeSpawn();
    const deps = { execPath: '/x', args: [], env: {}, spawn: f.spawn, exit: () => {} };
    expect(relaunchWithoutTokens(secrets('pipe'), { ...deps, platform: 'linux' })).toBe(false);
    expect(relaunchWithoutTokens(secrets('environment'), { ...deps, platform: 'win32' })).toBe(false);
    expect(f.calls).toEqual([]);
  });

  it('the secrets key: the OS keychain where there is a real one, else the 0600 file', () => {
    const dir = tempDir();
    const storage = (backend: string, available = true) => ({
      isEncryptionAvailable: () => available,
      getSelectedStorageBackend: () => backend,
      encryptString: (s: string) => Buffer.from(s),
      decryptString: (b: Buffer) => b.toString(),
    });
    expect(desktopSecretsKey(dir, storage('gnome_libsecret'), 'linux', { toFile: false }).where).toMatch(/^the OS keychain \(gnome_libsecret\)/);
    expect(desktopSecretsKey(dir, storage('basic_text'), 'linux', { toFile: false }).where).toBe(`the file ${path.join(dir, 'secrets.key')}`);
    expect(desktopSecretsKey(dir, storage('', false), 'darwin', { toFile: false }).where).toMatch(/^the file /);
    expect(desktopSecretsKey(dir, storage(''), 'darwin', { toFile: false }).where).toMatch(/^the OS keychain \(darwin\)/);
    expect(desktopSecretsKey(dir, storage('kwallet5'), 'linux', { toFile: true }).where).toMatch(/^the file /);
  });
});
