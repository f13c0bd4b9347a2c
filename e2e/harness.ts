/**
 * E2E harness: a real headless Gaffer (child process, real core and database), real agents from
 * the SDK, and Debian's Chromium driven by playwright-core. Everything talks to 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connect, type Agent } from '../src-main/sdk';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const SCREENSHOTS = path.join(ROOT, 'e2e', 'screenshots');
export const OPERATOR_TOKEN = 'gfo_e2e_operator_token_0123456789';

export interface Gaffer {
  url: string;
  port: number;
  agentUrl: string;
  dataDir: string;
  token: string;
  proc: ChildProcess;
  log(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  /** Scheduler timings (seconds), shortened for tests by default. */
  lockWindowS?: number;
  heartbeatTimeoutS?: number;
  sweepIntervalS?: number;
  reconnectGraceS?: number;
  heartbeatIntervalMs?: number;
  extraArgs?: string[];
  startTimeoutMs?: number;
  /**
   * Start as `npm start -- --headless` does (scripts/start.mjs: the esbuild bundle of the server
   * and its log worker) instead of the sources through tsx.
   */
  asShipped?: boolean;
}

export function tmpDataDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `gaffer-e2e-${label}-`));
}

/**
 * Starts `node --import tsx src-main/headless/main.ts` (or, `asShipped`, `node scripts/start.mjs
 * --headless`) on a free port and waits for its URL.
 */
export async function startGaffer(o: StartOptions = {}): Promise<Gaffer> {
  const dataDir = o.dataDir ?? tmpDataDir('srv');
  const rendererDir = process.env.GAFFER_RENDERER_DIR ?? path.join(ROOT, 'out', 'renderer');
  if (!fs.existsSync(path.join(rendererDir, 'index.html'))) throw new Error(`no built renderer in ${rendererDir}: run node scripts/e2e.mjs (it builds it)`);
  const entry = o.asShipped ? [path.join(ROOT, 'scripts', 'start.mjs'), '--headless'] : ['--import', 'tsx', path.join(ROOT, 'src-main', 'headless', 'main.ts')];
  const args = [
    ...entry,
    '--port',
    '0',
    '--data-dir',
    dataDir,
    '--lock-window-s',
    String(o.lockWindowS ?? 5),
    '--heartbeat-timeout-s',
    String(o.heartbeatTimeoutS ?? 4),
    '--sweep-interval-s',
    String(o.sweepIntervalS ?? 1),
    '--reconnect-grace-s',
    String(o.reconnectGraceS ?? 1),
    // Agents must heartbeat well inside the shortened heartbeat timeout.
    '--heartbeat-interval-ms',
    String(o.heartbeatIntervalMs ?? 1000),
    // Managed agents at Gaffer's own priority: on a loaded 2-core CI machine an agent at the default
    // nice 10 (its session's CPU share a tenth of the others') took over 20 s to start.
    '--agent-nice',
    '0',
    ...(o.extraArgs ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, GAFFER_OPERATOR_TOKEN: OPERATOR_TOKEN, GAFFER_RENDERER_DIR: rendererDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d) => (out += String(d)));
  proc.stderr!.on('data', (d) => (out += String(d)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`gaffer did not start in time:\n${out}`)), o.startTimeoutMs ?? 60_000);
    const check = () => {
      const m = /console at http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    proc.stdout!.on('data', check);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gaffer exited with ${code}:\n${out}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    port,
    agentUrl: `ws://127.0.0.1:${port}/agent`,
    dataDir,
    token: OPERATOR_TOKEN,
    proc,
    log: () => out,
    async stop() {
      if (proc.exitCode !== null) return;
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** The local HTTP API with the operator token. */
export async function apiCall<T = unknown>(g: Gaffer, method: string, p: string, body?: unknown): Promise<T> {
  const res = await fetch(`${g.url}/api/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${g.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} → ${res.status}: ${text}`);
  return JSON.parse(text) as T;
}

export async function createAgentToken(g: Gaffer, name: string, role: string | null = null): Promise<string> {
  const r = await apiCall<{ token: string }>(g, 'POST', '/tokens', { name, ...(role ? { role } : {}) });
  return r.token;
}

/** An in-process SDK agent (closed by the caller). */
export async function startAgent(g: Gaffer, token: string, role: string, name: string): Promise<Agent> {
  return connect({ url: g.agentUrl, token, role, name, reconnect: false });
}

/** An SDK agent in a child process (so the test can kill -9 it). Resolves once it printed `ready`. */
export async function spawnAgent(g: Gaffer, script: string, env: Record<string, string>): Promise<{ proc: ChildProcess; lines: string[]; waitFor(re: RegExp, ms?: number): Promise<string> }> {
  const proc = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'e2e', 'agents', script)], {
    cwd: ROOT,
    env: { ...process.env, GAFFER_URL: g.agentUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: Array<{ re: RegExp; resolve: (l: string) => void }> = [];
  const onData = (d: Buffer) => {
    for (const l of String(d).split('\n').filter(Boolean)) {
      lines.push(l);
      for (const w of [...waiters]) {
        if (!w.re.test(l)) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(l);
      }
    }
  };
  proc.stdout!.on('data', onData);
  proc.stderr!.on('data', onData);
  const waitFor = (re: RegExp, ms = 30_000) =>
    new Promise<string>((resolve, reject) => {
      const hit = lines.find((l) => re.test(l));
      if (hit) return resolve(hit);
      const t = setTimeout(() => reject(new Error(`agent did not print ${re} in ${ms} ms:\n${lines.join('\n')}`)), ms);
      waiters.push({ re, resolve: (l) => (clearTimeout(t), resolve(l)) });
    });
  await waitFor(/^ready /);
  return { proc, lines, waitFor };
}

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface ConsolePage {
  page: Page;
  errors: string[];
}

/** Opens the console with the operator token in the fragment and waits for the dashboard. */
export async function openConsole(browser: Browser, g: Gaffer, opts: { colorScheme?: 'dark' | 'light'; width?: number; height?: number } = {}): Promise<ConsolePage> {
  const context = await browser.newContext({ viewport: { width: opts.width ?? 1440, height: opts.height ?? 900 }, colorScheme: opts.colorScheme ?? 'dark', acceptDownloads: true });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Content Security Policy directive 'connect-src'|favicon|status of 404/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  await page.goto(`${g.url}/#token=${g.token}`);
  await page.waitForSelector('[data-testid="view-dashboard"]', { timeout: 30_000 });
  return { page, errors };
}

export async function go(page: Page, hash: string, ready: string): Promise<void> {
  await page.evaluate((h) => (window.location.hash = h), hash);
  await page.waitForSelector(ready, { timeout: 30_000 });
}

export async function shot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

/**
 * A screenshot without the toasts of earlier steps or the pointer on top. The toasts are dismissed,
 * unless a menu is open: a click outside a menu closes it (and drops its focus), so then they are
 * only hidden for the picture — through the element's style object, which the console's CSP allows
 * (Playwright's `screenshot({style})` injects a style element, which it refuses).
 */
export async function snap(page: Page, name: string): Promise<string> {
  const menuOpen = (await page.$('[role="menu"]')) !== null;
  if (!menuOpen) for (const b of await page.$$('.toasts [aria-label="Dismiss"]')) await b.click().catch(() => {});
  const toasts = (visibility: string) => page.$$eval('.toasts', (els, v) => els.forEach((e) => ((e as HTMLElement).style.visibility = v)), visibility);
  if (menuOpen) await toasts('hidden');
  await page.mouse.move(0, 0);
  try {
    return await shot(page, name);
  } finally {
    if (menuOpen) await toasts('');
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `fn` until it returns a truthy value. */
export async function until<T>(fn: () => Promise<T> | T, what: string, timeoutMs = 30_000, everyMs = 200): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await sleep(everyMs);
  }
}
