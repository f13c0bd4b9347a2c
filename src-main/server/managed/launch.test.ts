/**
 * What a managed process is started with (launch.ts): the agent token never in its environment or
 * argv (PROTOCOL §17) — it is handed over on a pipe by the spawner — and the user's umask back.
 */
import { describe, expect, it } from 'vitest';
import { DEFINITION_DEFAULTS, type ManagedDefinition } from '../../common/managed-agents';
import type { LaunchRequest } from '../../core/managed';
import { launchSpec, type LaunchPaths } from './launch';

const TOKEN = 'gft_managed-token-0123456789';
const OPERATOR = 'gfo_operator-token-0123456789';
const paths: LaunchPaths = { node: '/usr/bin/node', gafferBin: '/app/scripts/gaffer.mjs', shim: '/app/scripts/managed-shim.mjs' };

function request(def: Partial<ManagedDefinition>): LaunchRequest {
  const definition = { ...DEFINITION_DEFAULTS, name: 'a', role: 'dev', command: ['work'], ...def } as ManagedDefinition;
  return { managedId: 'mgd_1', definition, instance: 1, name: 'a-1', agentUrl: 'ws://127.0.0.1:1/agent', token: TOKEN, marker: 'k/mgd_1/1/x' };
}

const base = { PATH: '/bin', HOME: '/home/u', GAFFER_OPERATOR_TOKEN: OPERATOR, GAFFER_TOKEN: 'gft_gaffers-own-0123456789', HOLDS_IT: `x${OPERATOR}` };

describe('launchSpec', () => {
  for (const mode of ['per_task', 'long_running'] as const) {
    it(`${mode}: the token only in \`tokens\`, none in the environment or the argv; the user's umask passed on`, () => {
      const spec = launchSpec(request({ mode, env: { API_KEY: 'k' } }), paths, base, 0o022);
      expect(spec.tokens).toEqual({ GAFFER_TOKEN: TOKEN });
      const visible = JSON.stringify([spec.env, spec.args]);
      for (const secret of [TOKEN, OPERATOR, 'gft_gaffers-own']) expect(visible).not.toContain(secret);
      expect(Object.keys(spec.env).filter((k) => k.includes('TOKEN'))).toEqual([]);
      expect(spec.env).toMatchObject({ PATH: '/bin', API_KEY: 'k', GAFFER_MANAGED_PROCESS: 'k/mgd_1/1/x', GAFFER_UMASK: '22' });
    });
  }

  it('per_task with a workspace: the command agent gets --workspace and its options; a sandbox also hides the data directory (PROTOCOL §15)', () => {
    const workspace = { repo: '/srv/app', base: 'main', keep: 'never' as const, onRetry: 'fresh' as const, sandbox: true };
    const spec = launchSpec(request({ cwd: '/elsewhere', workspace }), { ...paths, dataDir: '/var/lib/gaffer' }, base);
    const own = spec.args.slice(0, spec.args.indexOf('--'));
    expect(own.slice(own.indexOf('--workspace'))).toEqual(['--workspace', '/srv/app', '--base', 'main', '--keep', 'never', '--on-retry', 'fresh', '--sandbox', '--hide', '/var/lib/gaffer']);
    expect(own).not.toContain('--cwd'); // the command runs in its worktree
    expect(launchSpec(request({}), paths, base).args).not.toContain('--workspace');
  });
});
