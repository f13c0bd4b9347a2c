/**
 * Layer 2 of the trigger rules (SPEC §5): preconditions. Each check returns ready / not_ready /
 * error with a reason and evidence — the exact path, URL, argv, key and dates it looked at, so
 * "today minus one day" across a month or year end is visible at a glance.
 *
 * Invariants:
 * 1. `error` (the check could not be evaluated: timeout, spawn failure, unreachable URL, no agent)
 *    is never reported as `not_ready`, and neither is ever `ready`.
 * 2. Nothing here writes to the database. Signal checks are synchronous; file, http, command and
 *    agent checks are asynchronous and run outside any transaction. Their timeouts bound real I/O
 *    (AbortSignal / execFile timeouts), not scheduling, so they use real time by design.
 * 3. Commands run without a shell: argv[0] is the program, every placeholder is substituted inside
 *    one argument and can never split into more.
 * 4. Reasons and evidence are storable text: what the outside world hands us (a file name, command
 *    output, an HTTP answer's JSON) is made well-formed (an unpaired surrogate becomes U+FFFD)
 *    before it leaves this module, and a cut tail never splits a surrogate pair.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import type { CheckVerdict, PreconditionInput } from '../../common/job-schema';
import { preconditionLabel } from '../../common/job-schema';
import type { Hub } from '../hub';
import type { Signals } from '../signals';
import { resolvePlaceholders, slotDates } from './plan';
import { resolveLocalDate } from './time-util';
import { wellFormedDeep } from '../../common/text';

export interface CheckOutcome {
  name: string;
  kind: PreconditionInput['kind'];
  verdict: CheckVerdict;
  reason: string;
  evidence: Record<string, unknown>;
}

export interface CheckContext {
  slot: string;
  /** Due instant of the slot. */
  slotAt: number;
  zone: string;
  role: string;
}

export interface PreconditionDeps {
  signals: Signals;
  hub: Pick<Hub, 'requestPrecheck'>;
}

/**
 * How the engine evaluates one precondition for a slot: `evaluatePrecondition` on live jobs; a
 * rehearsal (core/jobs/rehearse) scripts the outcomes instead, so nothing is checked for real.
 */
export type PreconditionEvaluator = (p: PreconditionInput, index: number, ctx: CheckContext) => CheckOutcome | Promise<CheckOutcome>;

const DEFAULT_TIMEOUT_S = 10;
const TAIL = 500;

/** The last TAIL code units of `s`, never starting with the low half of a surrogate pair. */
export function tail(s: string): string {
  if (s.length <= TAIL) return s;
  let from = s.length - TAIL;
  const first = s.charCodeAt(from);
  if (first >= 0xdc00 && first <= 0xdfff) from++;
  return `…${s.slice(from)}`;
}

function dotGet(value: unknown, path: string): { found: boolean; value: unknown } {
  let cur: unknown = value;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return { found: false, value: undefined };
    if (!(part in (cur as Record<string, unknown>))) return { found: false, value: undefined };
    cur = (cur as Record<string, unknown>)[part];
  }
  return { found: true, value: cur };
}

function jsonEqual(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Evaluates one precondition; synchronous for signals, a promise for the rest. Invariant 4 holds for what it returns. */
export function evaluatePrecondition(p: PreconditionInput, index: number, ctx: CheckContext, deps: PreconditionDeps): CheckOutcome | Promise<CheckOutcome> {
  const outcome = evaluate(p, index, ctx, deps);
  return outcome instanceof Promise ? outcome.then(wellFormedDeep) : wellFormedDeep(outcome);
}

function evaluate(p: PreconditionInput, index: number, ctx: CheckContext, deps: PreconditionDeps): CheckOutcome | Promise<CheckOutcome> {
  const name = preconditionLabel(p, index);
  const base = { name, kind: p.kind };
  let dates: ReturnType<typeof slotDates>;
  try {
    dates = slotDates(ctx.slot);
  } catch (e) {
    return { ...base, verdict: 'error', reason: `cannot derive dates from slot ${ctx.slot}: ${(e as Error).message}`, evidence: { slot: ctx.slot } };
  }
  const resolve = (text: string) => resolvePlaceholders(text, ctx.slot);
  try {
    switch (p.kind) {
      case 'signal': {
        const { text: key, used } = resolve(p.key ?? '{date}');
        const s = deps.signals.get(p.name, key);
        const evidence = { signal: p.name, key, keyTemplate: p.key ?? '{date}', placeholders: used, businessDate: dates.date, setAt: s?.setAt ?? null, setBy: s?.actor ?? null };
        return s
          ? { ...base, verdict: 'ready', reason: `signal ${p.name} is set for ${key} (at ${s.setAt} by ${s.actor})`, evidence }
          : { ...base, verdict: 'not_ready', reason: `signal ${p.name} is not set for ${key}`, evidence };
      }
      case 'file':
        return checkFile(p, base, ctx, resolve, dates.date);
      case 'http':
        return checkHttp(p, base, resolve, dates.date);
      case 'command':
        return checkCommand(p, base, resolve, dates.date);
      case 'agent':
        return checkAgent(p, base, ctx, deps, dates.date);
    }
  } catch (e) {
    return { ...base, verdict: 'error', reason: (e as Error).message, evidence: { slot: ctx.slot } };
  }
}

async function checkFile(
  p: Extract<PreconditionInput, { kind: 'file' }>,
  base: { name: string; kind: PreconditionInput['kind'] },
  ctx: CheckContext,
  resolve: (t: string) => { text: string; used: Record<string, string> },
  businessDate: string,
): Promise<CheckOutcome> {
  const { text: path, used } = resolve(p.path);
  const mode = p.check ?? 'exists';
  const evidence: Record<string, unknown> = { path, pathTemplate: p.path, placeholders: used, businessDate, check: mode };
  let after: number | undefined;
  if (mode === 'modified_after') {
    const basis = p.after ?? 'date';
    after =
      basis === 'slot'
        ? ctx.slotAt
        : resolveLocalDate(ctx.zone, basis === 'date' ? businessDate : slotDates(ctx.slot).yesterday);
    evidence.modifiedAfter = { basis, instant: new Date(after).toISOString(), zone: ctx.zone };
  }
  let st;
  try {
    st = await fs.stat(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      return { ...base, verdict: 'not_ready', reason: `${path} does not exist`, evidence: { ...evidence, exists: false } };
    }
    return { ...base, verdict: 'error', reason: `cannot stat ${path}: ${(e as Error).message}`, evidence: { ...evidence, error: code ?? String(e) } };
  }
  const mtime = st.mtimeMs;
  Object.assign(evidence, { exists: true, size: st.size, mtime: new Date(mtime).toISOString() });
  if (after === undefined) return { ...base, verdict: 'ready', reason: `${path} exists`, evidence };
  return mtime > after
    ? { ...base, verdict: 'ready', reason: `${path} was modified at ${new Date(mtime).toISOString()}, after ${new Date(after).toISOString()}`, evidence }
    : { ...base, verdict: 'not_ready', reason: `${path} was last modified at ${new Date(mtime).toISOString()}, not after ${new Date(after).toISOString()}`, evidence };
}

async function checkHttp(
  p: Extract<PreconditionInput, { kind: 'http' }>,
  base: { name: string; kind: PreconditionInput['kind'] },
  resolve: (t: string) => { text: string; used: Record<string, string> },
  businessDate: string,
): Promise<CheckOutcome> {
  const { text: url, used } = resolve(p.url);
  const expect = p.expectStatus ?? 200;
  const timeoutMs = (p.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
  const evidence: Record<string, unknown> = { url, urlTemplate: p.url, placeholders: used, businessDate, expectStatus: expect, timeoutMs };
  const t0 = performance.now();
  let res: Response;
  let body: string;
  try {
    res = await fetch(url, { method: 'GET', signal: AbortSignal.timeout(timeoutMs), redirect: 'manual', headers: { accept: 'application/json, */*' } });
    body = await res.text();
  } catch (e) {
    const err = e as Error;
    const reason = err.name === 'TimeoutError' || err.name === 'AbortError' ? `GET ${url} timed out after ${timeoutMs} ms` : `GET ${url} failed: ${err.message}`;
    return { ...base, verdict: 'error', reason, evidence: { ...evidence, durationMs: Math.round(performance.now() - t0) } };
  }
  Object.assign(evidence, { status: res.status, durationMs: Math.round(performance.now() - t0) });
  if (res.status !== expect) {
    return { ...base, verdict: 'not_ready', reason: `GET ${url} answered ${res.status}, expected ${expect}`, evidence: { ...evidence, body: tail(body) } };
  }
  if (p.jsonField === undefined) return { ...base, verdict: 'ready', reason: `GET ${url} answered ${res.status}`, evidence };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ...base, verdict: 'error', reason: `GET ${url} did not answer JSON, so field ${p.jsonField} cannot be read`, evidence: { ...evidence, body: tail(body) } };
  }
  const got = dotGet(json, p.jsonField);
  Object.assign(evidence, { jsonField: p.jsonField, found: got.found, value: got.value ?? null, ...(p.equals !== undefined ? { equals: p.equals } : {}) });
  if (!got.found) return { ...base, verdict: 'not_ready', reason: `field ${p.jsonField} is absent from the answer of ${url}`, evidence };
  const ok = p.equals !== undefined ? jsonEqual(got.value, p.equals) : Boolean(got.value);
  return ok
    ? { ...base, verdict: 'ready', reason: `field ${p.jsonField} is ${JSON.stringify(got.value)}`, evidence }
    : {
        ...base,
        verdict: 'not_ready',
        reason: p.equals !== undefined ? `field ${p.jsonField} is ${JSON.stringify(got.value)}, expected ${JSON.stringify(p.equals)}` : `field ${p.jsonField} is ${JSON.stringify(got.value)} (not truthy)`,
        evidence,
      };
}

function checkCommand(
  p: Extract<PreconditionInput, { kind: 'command' }>,
  base: { name: string; kind: PreconditionInput['kind'] },
  resolve: (t: string) => { text: string; used: Record<string, string> },
  businessDate: string,
): Promise<CheckOutcome> {
  const used: Record<string, string> = {};
  const argv = p.argv.map((a) => {
    const r = resolve(a);
    Object.assign(used, r.used);
    return r.text;
  });
  const timeoutMs = (p.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
  const evidence: Record<string, unknown> = { argv, placeholders: used, businessDate, timeoutMs, ...(p.cwd ? { cwd: p.cwd } : {}) };
  const t0 = performance.now();
  return new Promise((resolveP) => {
    execFile(
      argv[0]!,
      argv.slice(1),
      { timeout: timeoutMs, killSignal: 'SIGKILL', cwd: p.cwd, windowsHide: true, maxBuffer: 1024 * 1024, shell: false },
      (err, stdout, stderr) => {
        const durationMs = Math.round(performance.now() - t0);
        const out = { ...evidence, durationMs, stdout: tail(String(stdout ?? '')), stderr: tail(String(stderr ?? '')) };
        if (!err) {
          resolveP({ ...base, verdict: 'ready', reason: `${argv[0]} exited with 0`, evidence: { ...out, exitCode: 0 } });
          return;
        }
        const e = err as NodeJS.ErrnoException & { killed?: boolean; signal?: string | null; code?: number | string };
        if (e.killed || (e.signal && durationMs >= timeoutMs - 50)) {
          resolveP({ ...base, verdict: 'error', reason: `${argv[0]} did not finish within ${timeoutMs} ms (killed)`, evidence: { ...out, signal: e.signal ?? null } });
        } else if (typeof e.code === 'number') {
          resolveP({ ...base, verdict: 'not_ready', reason: `${argv[0]} exited with ${e.code}`, evidence: { ...out, exitCode: e.code } });
        } else {
          resolveP({ ...base, verdict: 'error', reason: `cannot run ${argv[0]}: ${e.message}`, evidence: { ...out, error: e.code ?? null, signal: e.signal ?? null } });
        }
      },
    );
  });
}

async function checkAgent(
  p: Extract<PreconditionInput, { kind: 'agent' }>,
  base: { name: string; kind: PreconditionInput['kind'] },
  ctx: CheckContext,
  deps: PreconditionDeps,
  businessDate: string,
): Promise<CheckOutcome> {
  const role = p.role ?? ctx.role;
  const timeoutMs = (p.timeoutS ?? DEFAULT_TIMEOUT_S) * 1000;
  const v = await deps.hub.requestPrecheck(role, p.check, ctx.slot, timeoutMs);
  const evidence: Record<string, unknown> = { role, check: p.check, slot: ctx.slot, businessDate, status: v.status, ...('instanceId' in v ? { instanceId: v.instanceId } : {}) };
  if (v.status === 'answered') {
    if (v.evidence !== undefined) evidence.agentEvidence = v.evidence;
    const why = v.reason ?? (v.ready ? 'the agent answered ready' : 'the agent answered not ready');
    return { ...base, verdict: v.ready ? 'ready' : 'not_ready', reason: `${p.check} by ${v.instanceId}: ${why}`, evidence };
  }
  return { ...base, verdict: 'error', reason: `precheck ${p.check} for role ${role}: ${v.reason}`, evidence };
}
