/**
 * What every view must pass at every size and theme: axe finds no serious or critical
 * violation, and no action (button, link, field) is cut off by a container that clips or
 * scrolls sideways, nor lies past the window's right edge.
 */
import axe from 'axe-core';
import type { Page } from 'playwright-core';

export interface AxeFinding {
  id: string;
  impact: string;
  help: string;
  nodes: string[];
}

const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Serious and critical axe violations (WCAG 2.x A/AA rules), with the first few offending nodes.
 *
 * axe-core's own `axe.run` in the page, not `@axe-core/playwright`'s AxeBuilder: the builder
 * evaluates axe's 600 KB source again on every call, runs `runPartial`, then opens a blank page,
 * evaluates the source there too and ships every result (passes included, each node with its CSS
 * selector) across to `finishRun` — 10–20× the audit itself (a 450-row table: 12–15 s against
 * 0.7–1.5 s). Here the source is evaluated once per document (the console navigates by hash, so it
 * stays), and only violations keep their nodes (`resultTypes`; the other groups are cut to one
 * node each, which we never read). The rules, the tags and the violations found are the same.
 */
export async function axeFindings(page: Page): Promise<AxeFinding[]> {
  // Every frame of the page, as the builder did (the console has none beyond the main one).
  for (const frame of page.frames()) if (!(await frame.evaluate('typeof window.axe?.run === "function"'))) await frame.evaluate(axe.source);
  const r = await page.evaluate((values) => window.axe.run(document, { runOnly: { type: 'tag', values }, resultTypes: ['violations'] }), WCAG_TAGS);
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact!, help: v.help, nodes: v.nodes.slice(0, 4).map((n) => `${n.target.join(' ')} — ${n.failureSummary?.split('\n')[1]?.trim() ?? ''}`) }));
}

declare global {
  interface Window {
    axe: typeof axe;
  }
}

/**
 * Actions that cannot be reached without scrolling a clipped container sideways (or that lie past
 * the window), described as "tag text (left–right vs the clip's left–right)". Also reports a page
 * that scrolls sideways as a whole.
 */
export async function clippedActions(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const vw = window.innerWidth;
    if (document.documentElement.scrollWidth > vw + 1) out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} px wide in ${vw} px)`);
    const sel = 'button, a[href], input:not([type="hidden"]), select, textarea, summary, [role="button"], [role="tab"], [role="radio"], [role="option"], [tabindex="0"]';
    for (const el of Array.from(document.querySelectorAll<HTMLElement>(sel))) {
      const r = el.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue;
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || el.closest('[aria-hidden="true"], [hidden]')) continue;
      const what = `${el.tagName.toLowerCase()} “${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim().slice(0, 40)}”`;
      if (r.right > vw + 1) {
        out.push(`${what} ends at ${Math.round(r.right)} px, past the window (${vw} px)`);
        continue;
      }
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const ox = getComputedStyle(a).overflowX;
        if (ox === 'visible') continue;
        const c = a.getBoundingClientRect();
        // The client box: without the vertical scrollbar.
        const right = c.left + a.clientLeft + a.clientWidth;
        if (r.right > right + 1 || r.left < c.left - 1) {
          out.push(`${what} at ${Math.round(r.left)}–${Math.round(r.right)} px is clipped by ${a.tagName.toLowerCase()}.${String(a.className).split(' ')[0]} (${Math.round(c.left)}–${Math.round(right)} px, overflow-x ${ox})`);
          break;
        }
      }
    }
    return out;
  });
}
