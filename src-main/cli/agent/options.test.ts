import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnvironment, resolveCommand } from './environment';
import { agentHelp, parseAgentArgs, UsageError } from './options';
import { runOutcomeFor, taskStatusFor, type Ending } from './outcome';

describe('gaffer agent options', () => {
  it('parses every flag and the command after --', () => {
    const o = parseAgentArgs(
      ['--url', 'ws://127.0.0.1:9/agent', '--role=dev', '--name', 'w1', '--cwd', '/tmp', '--timeout-s', '90', '--shell', '--parse', 'codex-json', '--grace-s', '5',
        '--kill-after-s', '2', '--poll-s', '0.5', '--max-tasks', '3', '--no-jobs', '--max-log-lines', '50', '--max-log-bytes', '4096', '--exit-on-stdin-close', '--quiet', '--verbose',
        '--', 'codex', 'exec', '--json', '--', 'x'],
      {},
    );
    expect(o).toEqual({
      url: 'ws://127.0.0.1:9/agent', role: 'dev', name: 'w1', cwd: '/tmp', timeoutS: 90, shell: true, parse: 'codex-json', graceS: 5, killAfterS: 2, pollS: 0.5,
      maxTasks: 3, tasks: true, jobs: false, maxLogLines: 50, maxLogBytes: 4096, exitOnStdinClose: true, quiet: true, verbose: true, command: 'codex', args: ['exec', '--json', '--', 'x'],
    });
  });

  it('has defaults: URL from GAFFER_URL, grace 30 s, SIGKILL 10 s after SIGTERM, tasks and jobs', () => {
    const o = parseAgentArgs(['--role', 'dev', '--', 'true'], { GAFFER_URL: 'ws://127.0.0.1:1/agent' });
    expect(o).toMatchObject({ url: 'ws://127.0.0.1:1/agent', graceS: 30, killAfterS: 10, pollS: 5, tasks: true, jobs: true, shell: false, verbose: false, command: 'true', args: [] });
    // No log budget of the agent's own: Gaffer's caps apply.
    expect(o).not.toHaveProperty('maxLogLines');
    expect(o).not.toHaveProperty('maxLogBytes');
    expect(parseAgentArgs(['--role', 'dev', '--', 'true'], {})).toMatchObject({ url: 'ws://127.0.0.1:7311/agent' });
  });

  it('--workspace: a worktree per attempt, with its base, retry, keep and sandbox settings (PROTOCOL §15)', () => {
    expect(parseAgentArgs(['--role', 'dev', '--workspace', '/srv/repo', '--', 'true'], {})).toMatchObject({ workspace: { repo: '/srv/repo', keep: 'failed', onRetry: 'resume', sandbox: false } });
    expect(parseAgentArgs(['--role', 'dev', '--workspace=/srv/repo', '--base', 'origin/main', '--keep', 'never', '--on-retry', 'fresh', '--sandbox', '--', 'true'], {})).toMatchObject({
      workspace: { repo: '/srv/repo', base: 'origin/main', keep: 'never', onRetry: 'fresh', sandbox: true, hide: [] },
    });
    expect(parseAgentArgs(['--role', 'dev', '--', 'true'], {})).not.toHaveProperty('workspace');
    const refuse = (argv: string[], msg: RegExp) => expect(() => parseAgentArgs(['--role', 'dev', ...argv, '--', 'true'], {})).toThrow(msg);
    refuse(['--sandbox'], /need --workspace/);
    refuse(['--base', 'main'], /need --workspace/);
    refuse(['--workspace', '/r', '--keep', 'sometimes'], /--keep must be/);
    refuse(['--workspace', '/r', '--on-retry', 'again'], /--on-retry must be/);
    refuse(['--workspace', '/r', '--cwd', '/tmp'], /exclude each other/);
  });

  it('refuses bad input with a message naming the flag', () => {
    const refuse = (argv: string[], msg: RegExp) => expect(() => parseAgentArgs(argv, {})).toThrow(msg);
    refuse(['--', 'true'], /--role is required/);
    refuse(['--role', 'a b', '--', 'true'], /--role must be/);
    refuse(['--role', 'dev'], /no command/);
    refuse(['--role', 'dev', '--timeout-s', 'soon', '--', 'true'], /--timeout-s must be/);
    refuse(['--role', 'dev', '--timeout-s', String(30 * 86_400), '--', 'true'], /--timeout-s must be a number from 1 to 2073600/); // past a Node timer's reach
    refuse(['--role', 'dev', '--parse', 'aider', '--', 'true'], /unknown format "aider"/);
    refuse(['--role', 'dev', '--token', 'gft_x', '--', 'true'], /GAFFER_TOKEN/);
    refuse(['--role', 'dev', '--frob', '--', 'true'], /unknown option --frob/);
    refuse(['--role', 'dev', '--no-tasks', '--no-jobs', '--', 'true'], /nothing to do/);
    refuse(['--role', '--', 'true'], /--role needs a value/);
    expect(() => parseAgentArgs(['--role', 'dev'], {})).toThrow(UsageError);
    expect(parseAgentArgs(['-h'], {})).toBe('help');
  });

  it('--help documents every flag the parser accepts', () => {
    const source = fs.readFileSync(path.join(import.meta.dirname, 'options.ts'), 'utf8');
    const flags = [...source.matchAll(/case '(--[a-z-]+)':/g)].map((m) => m[1]!).filter((f) => f !== '--token');
    expect(flags.length).toBeGreaterThan(15);
    const help = agentHelp();
    for (const f of flags) expect(help, f).toMatch(new RegExp(`(  |, )${f} `));
    for (const format of ['claude-stream-json', 'codex-json', 'gemini-stream-json']) expect(help).toContain(format);
  });
});

describe('exit status → outcome (PROTOCOL §6)', () => {
  const cases: Array<[Ending, string | undefined, unknown]> = [
    [{ kind: 'exited', code: 0 }, 'done', { outcome: 'success' }],
    [{ kind: 'exited', code: 75 }, 'backlog', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'exited', code: 65 }, 'failed', { outcome: 'failed', errorClass: 'fatal' }],
    [{ kind: 'exited', code: 77 }, 'blocked', { outcome: 'failed', errorClass: 'needs_human' }],
    [{ kind: 'exited', code: 1 }, 'failed', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'exited', code: 78 }, 'failed', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'signalled', signal: 'SIGSEGV' }, 'failed', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'timeout', afterS: 5 }, 'failed', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'spawn_failed', reason: 'ENOENT' }, 'failed', { outcome: 'failed', errorClass: 'fatal' }],
    [{ kind: 'shutdown' }, 'backlog', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'checkpoint_failed', reason: 'x' }, 'failed', { outcome: 'failed', errorClass: 'retryable' }],
    [{ kind: 'taken_away', reason: 'lock lost' }, undefined, undefined],
  ];
  it.each(cases)('%o → task %s', (ending, task, run) => {
    expect(taskStatusFor(ending)).toBe(task);
    expect(runOutcomeFor(ending)).toEqual(run);
  });
});

describe('the child environment', () => {
  it('never carries the agent or operator token, nor a variable holding one', () => {
    const env = childEnvironment(
      { PATH: '/bin', HOME: '/h', GAFFER_TOKEN: 'gft_secret_agent_token', GAFFER_OPERATOR_TOKEN: 'gfo_secret_operator', COPY: 'Bearer gft_secret_agent_token', GAFFER_URL: 'ws://x', GAFFER_KIND: 'stale' },
      { GAFFER_KIND: 'task', GAFFER_TASK_TITLE: 'a\0b' },
      ['another-secret-value'],
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/h', GAFFER_KIND: 'task', GAFFER_TASK_TITLE: 'ab' });
    expect(childEnvironment({ X: 'has another-secret-value inside' }, {}, ['another-secret-value'])).toEqual({});
  });

  it('finds a command on PATH, and says why one cannot run', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-resolve-'));
    fs.writeFileSync(path.join(dir, 'tool'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(dir, 'plain'), 'not executable', { mode: 0o644 });
    expect(resolveCommand('tool', { PATH: `/nonexistent:${dir}` }, '/')).toEqual({ ok: true, path: path.join(dir, 'tool') });
    expect(resolveCommand('./tool', {}, dir)).toEqual({ ok: true, path: path.join(dir, 'tool') });
    expect(resolveCommand('nope-not-here', { PATH: dir }, '/')).toMatchObject({ ok: false, reason: /not found on PATH \(ENOENT\)/ });
    if (process.getuid?.() !== 0) {
      // root may execute anything with an x bit, and reads past mode 0644 anyway: check only as a user
      expect(resolveCommand('plain', { PATH: dir }, '/')).toMatchObject({ ok: false, reason: /not executable \(EACCES\)/ });
    }
    expect(resolveCommand('./plain', {}, dir)).toMatchObject({ ok: false, reason: /not executable \(EACCES\)/ });
    expect(resolveCommand('/nonexistent/x', {}, '/')).toMatchObject({ ok: false, reason: /does not exist \(ENOENT\)/ });
  });
});
