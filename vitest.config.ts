import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const INCLUDE = ['src-main/**/*.test.ts', 'src-renderer/**/*.test.{ts,tsx}', 'examples/**/*.test.ts', 'sdk/typescript/**/*.test.ts'];

/**
 * What keeps a test file isolated (its own module graph, as vitest does by default): it mocks modules,
 * stubs globals or the environment, spies on a shared object, turns on fake timers, picks another
 * environment (happy-dom), touches `process` or `globalThis`, or imports the console's store (one
 * zustand store per module graph). Anything a file changes that way could leak into the next file in
 * the same worker.
 */
const NEEDS_ISOLATION =
  /vi\.(mock|doMock|unmock|stubGlobal|stubEnv|useFakeTimers|spyOn|hoisted|resetModules)\b|@vitest-environment|process\.(env|on|once|chdir|exit|umask|exitCode)\b|globalThis|\bDate\.now\s*=|\bMath\.random\s*=|from '[./]*\/store'|\/store\/|@testing-library/;

/**
 * The other files share one module graph per worker (`isolate: false`): most of them import the same
 * core (database, migrations, zod schemas, the server), and re-importing it for each of ~200 files
 * was about a fifth of the unit stage's CPU time. Chosen by reading each file at startup, so a file
 * that starts to mock or stub moves to the isolated project by itself.
 */
function sharedFiles(): string[] {
  const out: string[] = [];
  for (const dir of ['src-main', 'src-renderer', 'examples', path.join('sdk', 'typescript')]) {
    for (const name of fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })) {
      const file = path.join(dir, name);
      if (!/\.test\.tsx?$/.test(file) || file.includes('node_modules')) continue;
      if (!NEEDS_ISOLATION.test(fs.readFileSync(path.join(ROOT, file), 'utf8'))) out.push(file.split(path.sep).join('/'));
    }
  }
  return out.sort();
}
const SHARED = sharedFiles();

export default defineConfig({
  test: {
    environment: 'node',
    // A hang guard, not a speed check (timings live in the benches): the CPU-bound scenarios (a year of
    // slots in 11 zones, the rehearsal against a live engine over days of manual clock) take 10–16 s on
    // CI's 2 cores and reached 30 s when the machine was loaded, failing on time alone.
    testTimeout: 90_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core CI machine. Much of
    // this suite waits on child processes, sockets and timers, so a worker per core (at least two) keeps
    // both cores busy.
    maxWorkers: Math.max(2, os.availableParallelism()),
    projects: [
      { extends: true, test: { name: 'isolated', include: INCLUDE, exclude: [...SHARED, '**/node_modules/**'] } },
      { extends: true, test: { name: 'shared', include: SHARED, isolate: false } },
    ],
  },
});
