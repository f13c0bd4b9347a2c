/**
 * The state of a "Done when…" section (PROTOCOL §13): the checks as the operator types them, and
 * the declaration they make (or why they make none yet). Shared by the new-task dialog and the
 * job editor. Text fields stay text until `spec` reads them, so a half-typed check is kept as typed.
 */
import { useMemo, useState } from 'react';
import { describeVerify, verifySpec, type VerifyCheckKind, type VerifyOnFail, type VerifySpec } from '../../../src-main/common/verify';

/** One check as typed: every field is text (or a box), whatever its kind uses. */
export interface CheckDraft {
  key: number;
  kind: VerifyCheckKind;
  name: string;
  /** command: the program and its arguments, one per line (no shell). */
  command: string;
  cwd: string;
  timeoutS: string;
  /** file: the path; git: the repository; http: the URL. */
  target: string;
  nonEmpty: boolean;
  changedDuringAttempt: boolean;
  minCommits: string;
  clean: boolean;
  base: string;
  /** output: the JSON Schema, as JSON text. */
  schema: string;
  expectStatus: string;
}

export const KIND_LABELS: Record<VerifyCheckKind, string> = {
  command: 'A command passes',
  file: 'A file exists',
  git: 'The branch has commits',
  output: 'The output matches a schema',
  http: 'An address answers',
};

const DEFAULT_NAMES: Record<VerifyCheckKind, string> = { command: 'tests', file: 'file', git: 'commit', output: 'output', http: 'health' };

let nextKey = 1;
export function newCheck(kind: VerifyCheckKind): CheckDraft {
  return { key: nextKey++, kind, name: DEFAULT_NAMES[kind], command: '', cwd: '', timeoutS: '', target: '', nonEmpty: false, changedDuringAttempt: false, minCommits: '', clean: false, base: '', schema: '', expectStatus: '' };
}

const num = (s: string) => (s.trim() === '' ? undefined : Number(s));
const opt = (s: string) => (s.trim() === '' ? undefined : s.trim());

/** A draft as the wire wants it; a schema that is not JSON is a string, so validation names it. */
export function draftToCheck(d: CheckDraft): unknown {
  const name = d.name.trim();
  switch (d.kind) {
    case 'command':
      return { kind: 'command', name, command: d.command.split('\n').map((a) => a.trim()).filter(Boolean), cwd: opt(d.cwd), timeoutS: num(d.timeoutS) };
    case 'file':
      return { kind: 'file', name, path: d.target.trim(), nonEmpty: d.nonEmpty || undefined, changedDuringAttempt: d.changedDuringAttempt || undefined };
    case 'git':
      return { kind: 'git', name, repo: opt(d.target), minCommits: num(d.minCommits), clean: d.clean || undefined, base: opt(d.base) };
    case 'output': {
      let schema: unknown = d.schema;
      try {
        schema = JSON.parse(d.schema);
      } catch {
        // left as text: the schema check below says it is not JSON
      }
      return { kind: 'output', name, schema };
    }
    case 'http':
      return { kind: 'http', name, url: d.target.trim(), expectStatus: num(d.expectStatus) };
  }
}

/** Drops the fields left empty (undefined), as the strict schema wants. */
function compact(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v));
}

export interface DoneWhenResult {
  /** The declaration, when there are checks and they are all complete. */
  spec: VerifySpec | undefined;
  /** What is missing or wrong, in words (empty when there are no checks or all is well). */
  problems: string[];
  /** "done when `npm test` passes in the workspace and …", or null without checks. */
  preview: string | null;
}

export function readDoneWhen(checks: readonly CheckDraft[], onFail: VerifyOnFail, before: boolean): DoneWhenResult {
  if (checks.length === 0) return { spec: undefined, problems: [], preview: null };
  const r = verifySpec.safeParse(compact({ checks: checks.map(draftToCheck), ...(onFail !== 'retry' ? { onFail } : {}), ...(before ? { before: true } : {}) }));
  if (!r.success) {
    const problems = r.error.issues.map((i) => {
      const idx = typeof i.path[1] === 'number' ? i.path[1] : undefined;
      const who = idx !== undefined ? `check ${idx + 1}${checks[idx]?.name ? ` (“${checks[idx]!.name}”)` : ''}: ` : '';
      return `${who}${i.path.includes('schema') ? 'the schema must be a JSON object' : i.message}`;
    });
    return { spec: undefined, problems: [...new Set(problems)], preview: null };
  }
  return { spec: r.data, problems: [], preview: describeVerify(r.data) };
}

export function useDoneWhen(initial?: { checks?: CheckDraft[]; onFail?: VerifyOnFail; before?: boolean }) {
  const [checks, setChecks] = useState<CheckDraft[]>(initial?.checks ?? []);
  const [onFail, setOnFail] = useState<VerifyOnFail>(initial?.onFail ?? 'retry');
  const [before, setBefore] = useState(initial?.before ?? false);
  const result = useMemo(() => readDoneWhen(checks, onFail, before), [checks, onFail, before]);
  return {
    checks,
    onFail,
    before,
    ...result,
    add: (kind: VerifyCheckKind) => setChecks((cs) => [...cs, newCheck(kind)]),
    remove: (key: number) => setChecks((cs) => cs.filter((c) => c.key !== key)),
    change: (key: number, patch: Partial<CheckDraft>) => setChecks((cs) => cs.map((c) => (c.key === key ? { ...c, ...patch } : c))),
    setOnFail,
    setBefore,
  };
}
export type DoneWhenState = ReturnType<typeof useDoneWhen>;

/** A saved declaration as the section's drafts (the job editor opens a job that has checks). */
export function draftsOf(spec: VerifySpec | undefined): { checks: CheckDraft[]; onFail: VerifyOnFail; before: boolean } {
  const text = (v: string | number | undefined) => (v === undefined ? '' : String(v));
  const checks = (spec?.checks ?? []).map((c): CheckDraft => {
    const d = { ...newCheck(c.kind), name: c.name };
    switch (c.kind) {
      case 'command':
        return { ...d, command: c.command.join('\n'), cwd: text(c.cwd), timeoutS: text(c.timeoutS) };
      case 'file':
        return { ...d, target: c.path, nonEmpty: c.nonEmpty ?? false, changedDuringAttempt: c.changedDuringAttempt ?? false };
      case 'git':
        return { ...d, target: text(c.repo), minCommits: text(c.minCommits), clean: c.clean ?? false, base: text(c.base) };
      case 'output':
        return { ...d, schema: JSON.stringify(c.schema, null, 2) };
      case 'http':
        return { ...d, target: c.url, expectStatus: text(c.expectStatus) };
    }
  });
  return { checks, onFail: spec?.onFail ?? 'retry', before: spec?.before ?? false };
}
