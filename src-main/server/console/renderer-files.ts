/**
 * Serving the built renderer (`out/renderer`), shared by the headless HTTP server and the
 * Electron `app://` protocol handler: safe path resolution, content types, the console's CSP and
 * the SPA fallback to `index.html`.
 *
 * 1. A request path never escapes the renderer root (decoded, normalised, then checked to be
 *    inside the root; NUL and backslashes are refused).
 * 2. Paths with a file extension are files: missing → 404. Extension-less paths are app routes
 *    → `index.html` (SPA fallback).
 * 3. `index.html` is built with `base: './'` (so it also works from a file); when served for a
 *    deep route it gets `<base href="/">` so its relative asset URLs still resolve from the root.
 *    Its CSP meta tag is replaced by the server's policy so the two never disagree.
 */
import fs from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.txt': 'text/plain; charset=utf-8',
};

export function contentTypeFor(file: string): string {
  return TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

export interface CspOptions {
  /** The local server's port: the headless console opens `ws://127.0.0.1:<port>/console/events`. */
  port?: number | null;
  /** `frame-ancestors` only works as a header (not in a meta tag). */
  header?: boolean;
  /** Dev server (electron-vite dev): HMR needs inline scripts and its own socket. */
  dev?: { origin: string };
}

/**
 * The console's Content-Security-Policy. No inline scripts, no eval, nothing from elsewhere;
 * styles from files only (React's `style` props go through the CSSOM, which CSP allows).
 */
export function consoleCsp(opts: CspOptions = {}): string {
  const connect = ["'self'"];
  // (CSP host-sources cannot spell IPv6 literals: a page opened on [::1] relies on 'self'.)
  if (opts.port) for (const h of ['127.0.0.1', 'localhost']) connect.push(`ws://${h}:${opts.port}`);
  const script = ["'self'"];
  const style = ["'self'"];
  if (opts.dev) {
    const ws = opts.dev.origin.replace(/^http/, 'ws');
    connect.push(opts.dev.origin, ws);
    script.push("'unsafe-inline'");
    style.push("'unsafe-inline'");
  }
  const directives = [
    `default-src 'self'`,
    `script-src ${script.join(' ')}`,
    `style-src ${style.join(' ')}`,
    `img-src 'self' data: blob:`,
    `font-src 'self' data:`,
    `connect-src ${connect.join(' ')}`,
    `worker-src 'self' blob:`,
    `object-src 'none'`,
    `base-uri 'self'`,
    `form-action 'none'`,
  ];
  if (opts.header) directives.push(`frame-ancestors 'none'`);
  return directives.join('; ');
}

/** Security headers for everything the console serves (besides CSP). */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), usb=(), serial=(), hid=(), payment=()',
};

export type ResolvedFile = { kind: 'file'; file: string } | { kind: 'index'; file: string } | { kind: 'missing' } | { kind: 'forbidden' };

/** Maps a URL path to a file under `root` (invariants 1 and 2). */
export function resolveRendererPath(root: string, urlPath: string): ResolvedFile {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return { kind: 'forbidden' };
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return { kind: 'forbidden' };
  const rootAbs = path.resolve(root);
  const index = path.join(rootAbs, 'index.html');
  const rel = path.posix.normalize(`/${decoded}`).replace(/^\/+/, '');
  if (rel === '' || rel === 'index.html') return { kind: 'index', file: index };
  const file = path.resolve(rootAbs, rel);
  if (file !== rootAbs && !file.startsWith(rootAbs + path.sep)) return { kind: 'forbidden' };
  if (rel.split('/').some((seg) => seg.startsWith('.'))) return { kind: 'forbidden' };
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(file);
  } catch {
    stat = undefined;
  }
  if (stat?.isFile()) return { kind: 'file', file };
  if (path.posix.extname(rel) !== '') return { kind: 'missing' };
  return { kind: 'index', file: index };
}

/** Invariant 3: `<base href="/">` and the server's CSP in the meta tag. */
export function rewriteIndexHtml(html: string, csp: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${csp.replace(/"/g, '&quot;')}" />`;
  let out = html.replace(/<meta\s+http-equiv=["']Content-Security-Policy["'][^>]*>/i, meta);
  if (out === html && !/Content-Security-Policy/i.test(html)) out = out.replace(/<head([^>]*)>/i, `<head$1>\n    ${meta}`);
  if (!/<base\s/i.test(out)) out = out.replace(/<head([^>]*)>/i, `<head$1>\n    <base href="/" />`);
  return out;
}

/** Hashed build assets never change; everything else is revalidated. */
export function cacheControlFor(root: string, file: string): string {
  const rel = path.relative(path.resolve(root), file).split(path.sep).join('/');
  return rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
}
