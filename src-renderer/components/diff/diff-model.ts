/**
 * A workspace's unified diff as rows to draw (PROTOCOL §15): parsed with jsdiff's `parsePatch`,
 * one row per file header, hunk header and line, with old and new line numbers, and the language
 * highlight.js colours it in (from the file name). Pure: the viewer virtualises the rows.
 */
import { parsePatch } from 'diff';

export type DiffRowKind = 'file' | 'hunk' | 'add' | 'del' | 'ctx' | 'note';

export interface DiffRow {
  kind: DiffRowKind;
  text: string;
  /** Index into `files`. */
  file: number;
  oldNo?: number;
  newNo?: number;
}

export interface DiffFile {
  path: string;
  insertions: number;
  deletions: number;
  /** The row of its header. */
  row: number;
  /** highlight.js language name, when one fits. */
  language?: string;
  binary?: boolean;
}

const LANGUAGES: Record<string, string> = {
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  json: 'json', py: 'python', rb: 'ruby', go: 'go', rs: 'rust', java: 'java', kt: 'kotlin',
  c: 'c', h: 'c', cc: 'cpp', cpp: 'cpp', hpp: 'cpp', cs: 'csharp', php: 'php', swift: 'swift',
  sh: 'bash', bash: 'bash', zsh: 'bash', yml: 'yaml', yaml: 'yaml', toml: 'ini', ini: 'ini',
  md: 'markdown', css: 'css', scss: 'scss', html: 'xml', xml: 'xml', svg: 'xml', sql: 'sql',
};

export function languageOf(file: string): string | undefined {
  const base = file.split('/').pop() ?? file;
  if (base === 'Dockerfile') return 'dockerfile';
  if (base === 'Makefile') return 'makefile';
  const ext = base.includes('.') ? base.split('.').pop()!.toLowerCase() : '';
  return LANGUAGES[ext];
}

/** `a/src/x.ts` → `src/x.ts`; `/dev/null` stays. */
function stripPrefix(name: string | undefined): string {
  if (!name) return '';
  return /^[ab]\//.test(name) ? name.slice(2) : name;
}

export function diffRows(text: string): { files: DiffFile[]; rows: DiffRow[] } {
  const files: DiffFile[] = [];
  const rows: DiffRow[] = [];
  if (!text.trim()) return { files, rows };
  for (const patch of parsePatch(text)) {
    const newName = stripPrefix(patch.newFileName);
    const oldName = stripPrefix(patch.oldFileName);
    const path = newName && newName !== '/dev/null' ? newName : oldName;
    if (!path) continue;
    const index = files.length;
    const file: DiffFile = { path, insertions: 0, deletions: 0, row: rows.length };
    const language = languageOf(path);
    if (language) file.language = language;
    files.push(file);
    const what = oldName === '/dev/null' ? ' (new)' : newName === '/dev/null' ? ' (deleted)' : '';
    rows.push({ kind: 'file', text: `${path}${what}`, file: index });
    if (patch.hunks.length === 0) {
      file.binary = true;
      rows.push({ kind: 'note', text: 'Binary file, or only its mode changed', file: index });
    }
    for (const h of patch.hunks) {
      rows.push({ kind: 'hunk', text: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, file: index });
      let oldNo = h.oldStart;
      let newNo = h.newStart;
      for (const line of h.lines) {
        const mark = line[0];
        const body = line.slice(1);
        if (mark === '+') {
          rows.push({ kind: 'add', text: body, file: index, newNo: newNo++ });
          file.insertions++;
        } else if (mark === '-') {
          rows.push({ kind: 'del', text: body, file: index, oldNo: oldNo++ });
          file.deletions++;
        } else if (mark === '\\') rows.push({ kind: 'note', text: line.slice(2), file: index });
        else rows.push({ kind: 'ctx', text: body, file: index, oldNo: oldNo++, newNo: newNo++ });
      }
    }
  }
  return { files, rows };
}

/** "+12 −3 in 2 files" (a list cell); "no changes" when nothing changed. */
export function changeWords(c: { insertions: number; deletions: number; filesChanged: number }): string {
  if (c.filesChanged === 0) return 'no changes';
  return `+${c.insertions} −${c.deletions} in ${c.filesChanged} ${c.filesChanged === 1 ? 'file' : 'files'}`;
}
