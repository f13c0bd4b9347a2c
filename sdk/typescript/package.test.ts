/**
 * The `gaffer-agent` package as an agent repository gets it (nothing of Gaffer's server, Electron
 * or better-sqlite3 comes along): build and `npm pack` it, install the
 * tarball into a fresh project outside this repository, import it by name from plain Node, type-check
 * a TypeScript consumer against its declarations, and work a task on a real Gaffer server.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { makeTestCore, type TestCore } from '../../src-main/core/tests/test-core';
import { startServer, type RunningServer } from '../../src-main/server/server';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let work: string;
let project: string;
let tarball: string;
let core: TestCore;
let server: RunningServer;

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-sdk-pack-'));
  const built = await run(process.execPath, [path.join(ROOT, 'sdk', 'typescript', 'build.mjs'), '--pack', work], { cwd: ROOT });
  tarball = built.stdout.trim().split('\n').pop()!;
  project = path.join(work, 'agent-repo');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'my-agent', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: project });
  core = makeTestCore();
  server = await startServer(core, { port: 0, operatorToken: 'op-pack-test' });
}, 180_000);

afterAll(async () => {
  await server?.close();
  core?.close();
  fs.rmSync(work, { recursive: true, force: true });
});

it('packs built JS and one .d.ts, depending on ws and zod only', async () => {
  const listing = (await run('tar', ['tzf', tarball])).stdout.trim().split('\n').sort();
  expect(listing).toEqual(['package/README.md', 'package/index.d.ts', 'package/index.js', 'package/package.json']);
  const pkg = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'gaffer-agent', 'package.json'), 'utf8'));
  expect(Object.keys(pkg.dependencies).sort()).toEqual(['ws', 'zod']);
  expect(pkg.devDependencies).toBeUndefined();
  const installed = fs.readdirSync(path.join(project, 'node_modules')).filter((n) => !n.startsWith('.'));
  expect(installed.sort()).toEqual(['gaffer-agent', 'ws', 'zod']);
});

it('type-checks a TypeScript consumer against the declarations (no skipLibCheck)', async () => {
  fs.writeFileSync(
    path.join(project, 'agent.ts'),
    [
      "import { connect, RetryableError, type Agent, type Task, type WorkContext } from 'gaffer-agent';",
      'export async function start(token: string): Promise<Agent> {',
      "  const agent = await connect({ url: 'ws://127.0.0.1:1/agent', token, role: 'dev', name: 'typed' });",
      '  await agent.work(async (ctx: WorkContext) => {',
      '    const t: Task = ctx.task;',
      "    if (t.attempt > 3) throw new RetryableError('later');",
      '    return { output: { title: t.title } };',
      '  }, { maxTasks: 1 });',
      '  return agent;',
      '}',
      '',
    ].join('\n'),
  );
  const args = ['--noEmit', '--strict', '--skipLibCheck', 'false', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--target', 'es2022'];
  args.push('--typeRoots', path.join(ROOT, 'node_modules', '@types'), '--types', 'node', 'agent.ts');
  await expect(run(process.execPath, [TSC, ...args], { cwd: project })).resolves.toBeDefined();
}, 120_000); // a cold tsc over the declarations and @types/node: seconds on an idle machine, much longer on a busy one

it('works a task on a real server, imported by package name from plain Node', async () => {
  const { token } = core.tokens.create({ name: 'packed', role: 'dev', actor: 'operator:test' });
  const { task } = core.tasks.create({ title: 'from the tarball', role: 'dev' }, { actor: 'operator:test' });
  fs.writeFileSync(
    path.join(project, 'agent.mjs'),
    [
      "import { connect } from 'gaffer-agent';",
      "const agent = await connect({ url: process.env.GAFFER_URL, token: process.env.GAFFER_TOKEN, role: 'dev', name: 'packed-agent' });",
      'let seen;',
      'await agent.work(async ({ task }) => { seen = task.title; return { output: { by: "tarball" } }; }, { maxTasks: 1, idleDelayMs: 50 });',
      'await agent.close();',
      'console.log(JSON.stringify({ seen }));',
      '',
    ].join('\n'),
  );
  const out = await run(process.execPath, ['agent.mjs'], { cwd: project, env: { ...process.env, GAFFER_URL: server.agentUrl, GAFFER_TOKEN: token }, timeout: 30_000 });
  expect(JSON.parse(out.stdout.trim().split('\n').pop()!)).toEqual({ seen: 'from the tarball' });
  expect(core.tasks.get(task.id)).toMatchObject({ status: 'done', output: { by: 'tarball' } });
});
