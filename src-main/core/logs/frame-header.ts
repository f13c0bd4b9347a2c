/**
 * The header of a `log` frame read from its text without parsing the frame: `id`, `taskId` or
 * `runId`, `fence`. It is all the main thread needs (the holder check and the reply's id), so
 * the frame's lines can be parsed and checked by the log worker instead (frame-text.ts).
 *
 * Invariants:
 * 1. Either the header is returned exactly as `JSON.parse` + the wire schema would read those
 *    keys where they appear, or null (the frame then takes the parsed path, which answers it as
 *    it always did). Null for anything unusual: an escaped key, a repeated header key, a value
 *    outside the simple forms below, both or neither of `taskId`/`runId`.
 * 2. Keys after `lines` are not read once `type`, `id` and the work (`taskId` or `runId`) came
 *    before it: the worker checks the parsed frame against this header (frame-text.ts), so what
 *    the holder check saw is what gets stored.
 * 3. Cheap for every other frame: anything without the text `"type":"log"` is left at once.
 * 4. `repeatedLogHeaderKey` finds what `JSON.parse` hides (it keeps the last of a repeated key):
 *    a log frame naming `id`, `type`, `taskId` or `runId` twice with different values, however it
 *    is spaced or escaped. Such a frame is refused whole (docs/protocol.md, `log`), on either path.
 */

export interface LogFrameHeader {
  id: string | number;
  taskId?: number;
  runId?: string;
  fence?: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MAX_ID_CHARS = 100;

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

function skipSpace(s: string, i: number): number {
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i;
}

/** Index just past the string whose opening quote is at `i`, or -1 if it does not close. */
function stringEnd(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) return -1;
    let slashes = 0;
    for (let k = q - 1; k > i && s.charCodeAt(k) === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** What ends a number or a literal. */
const SCALAR_END_RE = /[,}\] \t\n\r]/g;

/** Index just past the array or object opening at `i`: from string to string, counting brackets in between. */
function containerEnd(s: string, i: number): number {
  let depth = 0;
  for (let j = i; ; ) {
    const quote = s.indexOf('"', j);
    const gapEnd = quote < 0 ? s.length : quote;
    for (; j < gapEnd; j++) {
      const d = s.charCodeAt(j);
      if (d === 0x7b || d === 0x5b) depth++;
      else if ((d === 0x7d || d === 0x5d) && --depth === 0) return j + 1;
    }
    if (quote < 0) return -1;
    j = stringEnd(s, quote);
    if (j < 0) return -1;
  }
}

/** Index just past the JSON value starting at `i` (not checked: the worker's parse does that), or -1. */
function valueEnd(s: string, i: number): number {
  const c = s.charCodeAt(i);
  if (c === QUOTE) return stringEnd(s, i);
  if (c === 0x7b || c === 0x5b) return containerEnd(s, i);
  SCALAR_END_RE.lastIndex = i;
  const end = SCALAR_END_RE.exec(s)?.index ?? s.length;
  return end > i ? end : -1;
}

/** A plain string value (printable ASCII, no escapes, 1..100 characters), or undefined. */
function plainString(s: string, i: number, end: number): string | undefined {
  if (s.charCodeAt(i) !== QUOTE || end - i - 2 < 1 || end - i - 2 > MAX_ID_CHARS) return undefined;
  for (let k = i + 1; k < end - 1; k++) {
    const c = s.charCodeAt(k);
    if (c < 0x20 || c > 0x7e || c === BACKSLASH) return undefined;
  }
  return s.slice(i + 1, end - 1);
}

/** A plain integer (digits, optional minus), safe, or undefined. */
function plainInteger(s: string, i: number, end: number): number | undefined {
  const t = s.slice(i, end);
  if (!/^-?(0|[1-9]\d{0,15})$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

const positive = (n: number | undefined) => (n !== undefined && n >= 1 ? n : undefined);

/** Invariant 1: the header of a `log` frame, or null (not a log frame, or not read this way). */
export function scanLogFrameHeader(s: string): LogFrameHeader | null {
  if (!s.includes('"type":"log"')) return null;
  const seen = new Set<string>();
  let id: string | number | undefined;
  let isLog = false;
  let taskId: number | undefined;
  let runId: string | undefined;
  let fence: number | undefined;
  let i = skipSpace(s, 0);
  if (s.charCodeAt(i) !== 0x7b) return null;
  i = skipSpace(s, i + 1);
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return null;
    const keyEnd = s.indexOf('"', i + 1);
    if (keyEnd < 0) return null;
    const key = s.slice(i + 1, keyEnd);
    if (key.includes('\\') || seen.has(key)) return null;
    seen.add(key);
    i = skipSpace(s, keyEnd + 1);
    if (s.charCodeAt(i) !== 0x3a) return null;
    i = skipSpace(s, i + 1);
    if (key === 'lines') {
      if (s.charCodeAt(i) !== 0x5b) return null;
      if (isLog && id !== undefined && (taskId !== undefined || runId !== undefined)) break; // invariant 2
    }
    const end = valueEnd(s, i);
    if (end < 0) return null;
    switch (key) {
      case 'id':
        id = s.charCodeAt(i) === QUOTE ? plainString(s, i, end) : plainInteger(s, i, end);
        if (id === undefined) return null;
        break;
      case 'type':
        if (s.slice(i, end) !== '"log"') return null;
        isLog = true;
        break;
      case 'taskId':
        if ((taskId = positive(plainInteger(s, i, end))) === undefined) return null;
        break;
      case 'fence':
        if ((fence = positive(plainInteger(s, i, end))) === undefined) return null;
        break;
      case 'runId':
        if ((runId = plainString(s, i, end)) === undefined) return null;
        break;
    }
    i = skipSpace(s, end);
    const c = s.charCodeAt(i);
    if (c === 0x7d) break;
    if (c !== 0x2c) return null;
    i = skipSpace(s, i + 1);
  }
  if (!isLog || id === undefined || !seen.has('lines') || (taskId === undefined) === (runId === undefined)) return null;
  const h: LogFrameHeader = { id };
  if (taskId !== undefined) h.taskId = taskId;
  if (runId !== undefined) h.runId = runId;
  if (fence !== undefined) h.fence = fence;
  return h;
}

/** The keys whose values the holder check and the reply are made from (invariant 4). */
const HEADER_KEYS = new Set(['id', 'type', 'taskId', 'runId']);

export const REPEATED_HEADER = 'the frame repeats a key of its header ("id", "type", "taskId" or "runId") with another value';

/** A JSON value's text as JSON.parse reads it (a container stays its text), or undefined when it does not parse. */
function valueOf(text: string): unknown {
  if (text.startsWith('{') || text.startsWith('[')) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Invariant 4: for a `log` frame (a `type` of "log", escaped or not) that names a header key twice
 * with different values, that key and the `id` JSON.parse would read (the last one); else
 * undefined (also for text that is not a JSON object: the parse refuses it as before). Frames with
 * neither `"log"` nor an escape in their text are left at once.
 */
export function repeatedLogHeaderKey(s: string): { key: string; id: unknown } | undefined {
  if (!s.includes('"log"') && !s.includes('\\u')) return undefined;
  const values = new Map<string, unknown>();
  let repeated: string | undefined;
  let isLog = false;
  let i = skipSpace(s, 0);
  if (s.charCodeAt(i) !== 0x7b) return undefined;
  i = skipSpace(s, i + 1);
  if (s.charCodeAt(i) === 0x7d) return undefined;
  for (;;) {
    if (s.charCodeAt(i) !== QUOTE) return undefined;
    const keyEnd = stringEnd(s, i);
    if (keyEnd < 0) return undefined;
    const raw = s.slice(i + 1, keyEnd - 1);
    const key = raw.includes('\\') ? (valueOf(s.slice(i, keyEnd)) as string | undefined) : raw;
    if (key === undefined) return undefined;
    i = skipSpace(s, keyEnd);
    if (s.charCodeAt(i) !== 0x3a) return undefined;
    i = skipSpace(s, i + 1);
    const end = valueEnd(s, i);
    if (end < 0) return undefined;
    if (HEADER_KEYS.has(key)) {
      const v = valueOf(s.slice(i, end));
      if (v === undefined) return undefined;
      if (key === 'type' && v === 'log') isLog = true;
      if (values.has(key) && values.get(key) !== v) repeated ??= key;
      values.set(key, v);
    }
    i = skipSpace(s, end);
    const c = s.charCodeAt(i);
    if (c === 0x7d) break;
    if (c !== 0x2c) return undefined;
    i = skipSpace(s, i + 1);
  }
  return isLog && repeated !== undefined ? { key: repeated, id: values.get('id') } : undefined;
}
