/**
 * PROTOCOL §17 for one process (scripts/lib/process-secrets.mjs), with real processes: a process
 * given tokens in its environment keeps none of them in its environment — neither in
 * `process.env` (so its children do not inherit them) nor in /proc/<pid>/environ (what any other
 * process of the user reads) — and tokens reach a child only over a pipe.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { secretFiles, secretPipes } from '../../scripts/lib/process-secrets.mjs';

const PROBE = path.resolve('src-main/cli/testing/secrets-probe.mjs');
const AGENT = 'gft_probe-agent-token-0123456789';
const OPERATOR = 'gfo_probe-operator-token-0123456789';
const linux = process.platform === 'linux';
const started: ChildProcess[] = [];

afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});

interface ProbeReport {
  pid: number;
  tokens: Record<string, string>;
  from: Record<string, string>;
  cleared: { ok: boolean; reason: string | null };
  problems: string[];
  warnings: string[];
  again: boolean;
  ownEnv: Record<string, string>;
  fd3Open: boolean;
  childEnv: Record<string, string>;
  parentEnvironSeenByChild: string;
}

function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('GAFFER_')) env[k] = v;
  return { ...env, ...extra };
}

/** Starts `file args` and resolves with the probe's report once it printed it (the probe stays alive). */
function probe(file: string, args: string[], opts: { env: Record<string, string>; stdio?: unknown[]; after?(c: ChildProcess): void }): Promise<ProbeReport & { child: ChildProcess }> {
  const child = spawn(file, args, { env: opts.env, stdio: (opts.stdio ?? ['pipe', 'pipe', 'pipe']) as never });
  started.push(child);
  opts.after?.(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr!.on('data', (d) => (err += d));
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ ...(JSON.parse(out.slice(0, nl)) as ProbeReport), child });
    });
    child.once('exit', (code) => reject(new Error(`the probe exited (${code}) before reporting: ${err}`)));
  });
}

const holdsToken = (text: string) => text.includes(AGENT) || text.includes(OPERATOR) || /GAFFER_(OPERATOR_)?TOKEN(_FD)?=/.test(text);

describe.skipIf(!linux)('process secrets (PROTOCOL §17)', () => {
  it('tokens exported to a process: taken once, and gone from its environment, its /proc/<pid>/environ and its children', async () => {
    const r = await probe(process.execPath, [PROBE], {
      env: cleanEnv({ GAFFER_TOKEN: AGENT, GAFFER_OPERATOR_TOKEN: OPERATOR, COPY_OF_IT: `x${AGENT}y`, KEEP_ME: 'kept' }),
    });
    expect(r.tokens).toEqual({ GAFFER_TOKEN: AGENT, GAFFER_OPERATOR_TOKEN: OPERATOR });
    expect(r.from).toEqual({ GAFFER_TOKEN: 'environment', GAFFER_OPERATOR_TOKEN: 'environment' });
    expect(r.cleared).toEqual({ ok: true, reason: null });
    expect(r.again).toBe(true);
    for (const env of [r.ownEnv, r.childEnv]) {
      expect(Object.keys(env)).not.toContain('GAFFER_TOKEN');
      expect(Object.keys(env)).not.toContain('GAFFER_OPERATOR_TOKEN');
      expect(Object.keys(env)).not.toContain('COPY_OF_IT');
      expect(env.KEEP_ME).toBe('kept');
    }
    // What another process reads: the start-up environment, overwritten in place.
    const environ = fs.readFileSync(`/proc/${r.pid}/environ`, 'utf8');
    expect(holdsToken(environ)).toBe(false);
    expect(holdsToken(r.parentEnvironSeenByChild)).toBe(false);
    expect(environ).toContain('KEEP_ME=kept');
    expect(r.warnings).toEqual([]);
  });

  it('a token handed over on a pipe: read once, the fd closed, nothing in the environment', async () => {
    const pipes = secretPipes({ GAFFER_TOKEN: AGENT }, ['pipe', 'pipe', 'pipe'], cleanEnv({}));
    expect(pipes.env.GAFFER_TOKEN_FD).toBe('3');
    expect(JSON.stringify(pipes.env)).not.toContain(AGENT);
    const r = await probe(process.execPath, [PROBE], { env: pipes.env, stdio: pipes.stdio as unknown[], after: (c) => void pipes.send(c) });
    expect(r.tokens).toEqual({ GAFFER_TOKEN: AGENT });
    expect(r.from).toEqual({ GAFFER_TOKEN: 'pipe' });
    expect(r.fd3Open).toBe(false);
    expect(r.cleared.ok).toBe(true);
    expect(holdsToken(fs.readFileSync(`/proc/${r.pid}/environ`, 'utf8'))).toBe(false);
    expect(holdsToken(fs.readFileSync(`/proc/${r.pid}/cmdline`, 'utf8'))).toBe(false);
    expect(Object.keys(r.childEnv).filter((k) => k.startsWith('GAFFER_'))).toEqual([]);
  });

  it('a token handed over in a file (through a wrapper that does not read it): read once, the file deleted, nothing in the environment', async () => {
    const handOff = secretFiles({ GAFFER_TOKEN: AGENT }, cleanEnv({}));
    const file = handOff.env.GAFFER_TOKEN_FILE!;
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(JSON.stringify(handOff.env)).not.toContain(AGENT);
    try {
      // The wrapper (sh) passes the variable on; the probe, two processes down, takes the token.
      const r = await probe('/bin/sh', ['-c', `"${process.execPath}" "${PROBE}"; exit $?`], { env: handOff.env });
      expect(r.tokens).toEqual({ GAFFER_TOKEN: AGENT });
      expect(r.from).toEqual({ GAFFER_TOKEN: 'file' });
      expect(fs.existsSync(file)).toBe(false);
      expect(holdsToken(fs.readFileSync(`/proc/${r.pid}/environ`, 'utf8'))).toBe(false);
      expect(Object.keys(r.childEnv).filter((k) => k.startsWith('GAFFER_'))).toEqual([]);
      expect(r.warnings).toEqual([]);
    } finally {
      handOff.cleanup();
    }
    expect(fs.existsSync(path.dirname(file))).toBe(false);
  });

  it('a hand-off that cannot be read is named, not silently ignored', async () => {
    const r = await probe(process.execPath, [PROBE], { env: cleanEnv({ GAFFER_TOKEN_FD: '97' }) });
    expect(r.tokens).toEqual({});
    expect(r.problems).toEqual(['GAFFER_TOKEN_FD=97: cannot read it (EBADF)']);
    expect(r.warnings[0]).toBe('GAFFER_TOKEN_FD=97: cannot read it (EBADF)');
  });

  it('a wrapper that stays alive with the token (as npx does) is named in a warning', async () => {
    const r = await probe('/bin/sh', ['-c', `"${process.execPath}" "${PROBE}"; exit $?`], { env: cleanEnv({ GAFFER_TOKEN: AGENT }) });
    expect(r.tokens.GAFFER_TOKEN).toBe(AGENT);
    expect(holdsToken(fs.readFileSync(`/proc/${r.pid}/environ`, 'utf8'))).toBe(false);
    expect(r.warnings).toEqual([expect.stringMatching(new RegExp(`^process ${r.child.pid} \\(sh\\) still holds a Gaffer token in its environment`))]);
  });
});
