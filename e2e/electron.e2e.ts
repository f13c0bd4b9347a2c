/**
 * The Electron smoke spec, inside the e2e suite (vitest + playwright-core; scripts/e2e.mjs).
 * Skipped with the reason where Electron cannot run (no binary, no display, no Electron-ABI
 * build of better-sqlite3). The work is in electron.smoke.ts so it also runs standalone.
 */
import { describe, expect, it } from 'vitest';
import { runElectronSmoke, skipReason } from './electron.smoke';

describe('Electron shell', () => {
  it('launches, shows the dashboard, and the preload bridge answers over IPC', async (ctx) => {
    const why = skipReason();
    if (why) {
      console.log(`electron smoke skipped: ${why}`);
      ctx.skip(why);
    }
    const r = await runElectronSmoke();
    expect(r.skipped).toBeUndefined();
    expect(r.title).toBe('Gaffer');
    expect(r.url).toMatch(/^app:\/\/gaffer\//);
    console.log(`electron smoke: dashboard rendered in ${r.dashboardMs} ms`);
  });
});
