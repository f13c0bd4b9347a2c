/**
 * "Done means verified" on the wire (PROTOCOL §13): the checks a task or job declares, the
 * evidence Gaffer keeps for each attempt, and the plain words the console shows for both.
 * Field names of §13 are fixed; `base` on a `git` check is an addition (docs/protocol.md).
 */
import { z } from 'zod';

const checkName = z.string().trim().min(1, 'a check needs a name').max(100);
const path = z.string().min(1).max(1000);

export const verifyCheck = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('command'),
    name: checkName,
    /** Program and arguments, no shell. Passes on exit status 0. */
    command: z.array(z.string().min(1).max(2000)).min(1, 'a command check needs a program to run').max(50),
    /** Default: the attempt's workspace (§15). */
    cwd: path.optional(),
    /** Default 300. */
    timeoutS: z.number().positive().max(86_400).optional(),
  }),
  z.strictObject({
    kind: z.literal('file'),
    name: checkName,
    path,
    nonEmpty: z.boolean().optional(),
    changedDuringAttempt: z.boolean().optional(),
  }),
  z.strictObject({
    kind: z.literal('git'),
    name: checkName,
    /** Default: the attempt's workspace. */
    repo: path.optional(),
    /** Default 1. */
    minCommits: z.number().int().min(0).max(10_000).optional(),
    clean: z.boolean().optional(),
    /** Addition: the ref commits are counted over (default: the workspace's base). */
    base: z.string().min(1).max(200).optional(),
  }),
  z.strictObject({
    kind: z.literal('output'),
    name: checkName,
    /** A JSON Schema the task's / run's `output` must validate against. */
    schema: z.record(z.string(), z.unknown()),
  }),
  z.strictObject({
    kind: z.literal('http'),
    name: checkName,
    url: z.string().url('a URL such as http://127.0.0.1:8080/health').max(2000),
    /** Default: any 2xx. */
    expectStatus: z.number().int().min(100).max(599).optional(),
  }),
]);
export type VerifyCheck = z.infer<typeof verifyCheck>;
export type VerifyCheckKind = VerifyCheck['kind'];
export const VERIFY_CHECK_KINDS: readonly VerifyCheckKind[] = ['command', 'file', 'git', 'output', 'http'];

export const VERIFY_ON_FAIL = ['retry', 'needs_human', 'fail'] as const;
export type VerifyOnFail = (typeof VERIFY_ON_FAIL)[number];

export const verifySpec = z
  .strictObject({
    checks: z.array(verifyCheck).min(1, 'add at least one check').max(20),
    /** Default `retry`. */
    onFail: z.enum(VERIFY_ON_FAIL).optional(),
    /** Run the checks before a later attempt is handed out: if they pass, the work is already done. */
    before: z.boolean().optional(),
  })
  .superRefine((v, ctx) => {
    const seen = new Set<string>();
    v.checks.forEach((c, i) => {
      if (seen.has(c.name)) ctx.addIssue({ code: 'custom', path: ['checks', i, 'name'], message: `two checks are called “${c.name}”` });
      seen.add(c.name);
    });
  });
export type VerifySpec = z.infer<typeof verifySpec>;

/** One check's result, as kept with the attempt. */
export interface CheckResult {
  name: string;
  kind: VerifyCheckKind;
  passed: boolean;
  /** Why, in words ("exited with 0", "3 failing", "no commit over main"). */
  detail: string;
  durationMs: number;
  /** The last lines of a command's output (stdout and stderr, at most 4 KiB). */
  outputTail?: string;
}

/** `verification` on a task / run attempt (PROTOCOL §13). */
export interface Verification {
  at: string;
  passed: boolean;
  checks: CheckResult[];
  /** Which attempt the checks judged. */
  attempt: number;
  /** True for the "is it already done?" checks run before a later attempt (`before: true`). */
  before?: boolean;
}

/** The `previousError` a retried attempt gets after a failed verification. */
export function verificationError(v: Pick<Verification, 'checks'>): string {
  const failed = v.checks.filter((c) => !c.passed);
  return `verification failed: ${failed.map((c) => `${c.name}: ${c.detail}`).join('; ') || 'no check passed'}`.slice(0, 2000);
}

// ---- plain words --------------------------------------------------------------------------------

function code(argv: readonly string[]): string {
  return `\`${argv.join(' ')}\``;
}

/** One check in words, e.g. "`npm test` passes in the workspace". */
export function describeCheck(c: VerifyCheck): string {
  switch (c.kind) {
    case 'command':
      return `${code(c.command)} passes ${c.cwd ? `in ${c.cwd}` : 'in the workspace'}`;
    case 'file': {
      const how = [c.nonEmpty ? 'is not empty' : null, c.changedDuringAttempt ? 'was changed during the attempt' : null].filter(Boolean);
      return `${c.path} exists${how.length ? ` and ${how.join(' and ')}` : ''}`;
    }
    case 'git': {
      const n = c.minCommits ?? 1;
      const where = c.repo ? `the branch in ${c.repo}` : 'the branch';
      const commits = n === 0 ? `${where} exists` : `${where} has ${n === 1 ? 'a commit' : `${n} commits`}${c.base ? ` over ${c.base}` : ''}`;
      return c.clean ? `${commits} and nothing uncommitted` : commits;
    }
    case 'output':
      return 'the output matches its schema';
    case 'http':
      return `${c.url} answers ${c.expectStatus ?? '2xx'}`;
  }
}

/** The whole declaration in words: "done when `npm test` passes in the workspace and the branch has a commit". */
export function describeVerify(spec: Pick<VerifySpec, 'checks' | 'onFail' | 'before'>): string {
  const parts = spec.checks.map(describeCheck);
  const list = parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts[parts.length - 1]}`;
  const onFail = spec.onFail ?? 'retry';
  const otherwise = onFail === 'retry' ? 'otherwise it is tried again, told what failed' : onFail === 'needs_human' ? 'otherwise it waits for you' : 'otherwise it fails';
  return `done when ${list}; ${otherwise}${spec.before ? '. A later attempt first checks whether the work is already done' : ''}.`;
}

/** A stored verification in words ("2 of 3 checks passed: tests failed (exited with 1)"). */
export function describeVerification(v: Pick<Verification, 'passed' | 'checks' | 'before'>): string {
  if (v.passed) return v.before ? 'already done: every check passed before a new attempt was handed out' : `verified: ${v.checks.length === 1 ? 'the check' : `all ${v.checks.length} checks`} passed`;
  const failed = v.checks.filter((c) => !c.passed);
  return `${v.before ? 'not done yet' : 'verification failed'}: ${failed.map((c) => `${c.name} (${c.detail})`).join(', ')}`;
}
