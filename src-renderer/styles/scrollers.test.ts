/**
 * The long lists' scrollers (a transcript, a raw log: thousands of rows) are square and opaque.
 * Chromium scrolls a scroller with rounded corners on the main thread: each wheel step then waits for
 * the page, and a collection's pause or a long layout is a frozen frame. Square and opaque, the
 * compositor thread scrolls it (bench/transcript.ts, "a user's scroll": which thread scrolled).
 */
import { beforeAll, describe, expect, it } from 'vitest';

let CSS = '';
beforeAll(async () => {
  // The renderer's code may not import Node's modules (lint); a test reads the file through a dynamic import.
  const fs = await import('node:fs');
  CSS = fs.readFileSync(new URL('./app.css', import.meta.url), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
});

/** The rules whose selector names `cls` itself (not a :focus/:hover/:active state), as "selector { body }". */
function rulesOf(cls: string): string[] {
  const own = new RegExp(`\\.${cls}(?![\\w-])`);
  return [...CSS.matchAll(/([^{}]*)\{([^{}]*)\}/g)]
    .filter(([, sel]) => sel!.split(',').some((s) => own.test(s) && !/:(focus|hover|active)/.test(s)))
    .map(([, sel, body]) => `${sel!.trim()} { ${body!.trim()} }`);
}

describe('the long lists’ scrollers', () => {
  for (const cls of ['transcript-scroll', 'log-lines']) {
    it(`.${cls} has no border-radius and an opaque background`, () => {
      const rules = rulesOf(cls);
      expect(rules.length).toBeGreaterThan(0);
      for (const rule of rules) expect(rule).not.toMatch(/border(-(top|bottom)-(left|right))?-radius/);
      expect(rules.some((r) => /[{;]\s*background(-color)?\s*:\s*(var\(--bg[\w-]*\)|#[0-9a-f]{3,6}\b)/i.test(r))).toBe(true);
    });
  }
});
