/**
 * Terminal colours in log lines, parsed by anser (a well-kept ANSI SGR parser), turned into
 * segments the log pane renders as spans: the 16 palette colours as classes (themed in CSS),
 * 256-colour and true-colour codes as inline colours. Cursor movements and other escapes are
 * dropped. Text stays text: nothing is ever inserted as HTML.
 */
import Anser from 'anser';

export interface AnsiSegment {
  text: string;
  /** Palette class names (`ansi-red-fg`, `ansi-bright-blue-bg`, …). */
  classes: string[];
  /** `rgb(…)` for 256-colour and true-colour codes. */
  color?: string;
  background?: string;
}

// eslint-disable-next-line no-control-regex -- ESC is exactly what is looked for
const HAS_ESCAPE = /\x1b/;

const BASE = ['black', 'red', 'green', 'yellow', 'blue', 'magenta', 'cyan', 'white'];

/** xterm's 256 colours: 0–15 the palette (as classes), a 6×6×6 cube, then 24 greys. */
function palette(name: string): { cls?: string; rgb?: string } {
  const n = Number(name.slice('ansi-palette-'.length));
  if (!Number.isInteger(n) || n < 0 || n > 255) return {};
  if (n < 16) return { cls: `ansi-${n >= 8 ? 'bright-' : ''}${BASE[n % 8]}` };
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return { rgb: `rgb(${v}, ${v}, ${v})` };
  }
  const c = n - 16;
  const level = (k: number) => (k === 0 ? 0 : 55 + k * 40);
  return { rgb: `rgb(${level(Math.floor(c / 36))}, ${level(Math.floor(c / 6) % 6)}, ${level(c % 6)})` };
}

function colour(name: string | null, truecolor: string | null): { cls?: string; rgb?: string } {
  if (!name) return {};
  if (name === 'ansi-truecolor') return truecolor ? { rgb: `rgb(${truecolor})` } : {};
  if (name.startsWith('ansi-palette-')) return palette(name);
  return { cls: name };
}

export function ansiSegments(text: string): AnsiSegment[] {
  if (!HAS_ESCAPE.test(text)) return [{ text, classes: [] }];
  const out: AnsiSegment[] = [];
  for (const e of Anser.ansiToJson(text, { use_classes: true, remove_empty: true })) {
    const classes: string[] = [];
    const seg: AnsiSegment = { text: e.content, classes };
    const fg = colour(e.fg, e.fg_truecolor);
    const bg = colour(e.bg, e.bg_truecolor);
    if (fg.cls) classes.push(`${fg.cls}-fg`);
    if (fg.rgb) seg.color = fg.rgb;
    if (bg.cls) classes.push(`${bg.cls}-bg`);
    if (bg.rgb) seg.background = bg.rgb;
    for (const d of e.decorations ?? []) classes.push(`ansi-${d}`);
    out.push(seg);
  }
  return out.length ? out : [{ text: '', classes: [] }];
}

/** The text without escapes (what search and copy see). */
export function ansiPlain(text: string): string {
  return HAS_ESCAPE.test(text) ? Anser.ansiToText(text) : text;
}
