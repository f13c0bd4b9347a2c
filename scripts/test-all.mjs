#!/usr/bin/env node
/**
 * `npm test`: everything a change must pass, in order — typecheck, lint, unit/integration tests,
 * the Python SDK's tests (pytest), browser e2e, and the bounded reliability suite. Installs
 * Chromium for the e2e tests and Debian's python3-websockets/python3-pytest for the Python tests
 * when they are missing and we can (root with apt). Ends with one line: "N passed, N failed".
 *
 * Typecheck, lint and the Python tests are single-threaded and independent: they run side by side
 * (their output is printed whole when each ends). The vitest suites use every core and the
 * reliability suite measures timings, so those run alone.
 *
 * The end of the output names every failed test with its error's first line, and every test that
 * passed only on its retry (unit and browser tests get one retry; the reliability suite none): CI
 * keeps only the tail of what this prints.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
process.chdir(root);
const only = process.argv.slice(2);
let passed = 0;
let failed = 0;
const failures = [];
/** Each failed test's file, name and first line of its error: printed again at the very end, where CI's tail shows it. */
const failedTests = [];
/** Tests that passed only on their retry: printed at the end too, so a flaky test is seen, not hidden. */
const flakyTests = [];

function run(name, cmd, args, env = {}) {
  if (only.length && !only.includes(name)) return true;
  console.log(`\n=== ${name}: ${cmd} ${args.join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env: { ...process.env, ...env } });
  const ok = r.status === 0;
  if (!ok) failures.push(name);
  return ok;
}

/** Like run(), without waiting: the output is buffered and printed in one piece when the step ends. */
function runBuffered(name, cmd, args, opts = {}) {
  if (only.length && !only.includes(name)) return Promise.resolve(true);
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
    const chunks = [];
    child.stdout.on('data', (c) => chunks.push(c));
    child.stderr.on('data', (c) => chunks.push(c));
    child.on('error', (err) => chunks.push(Buffer.from(String(err))));
    child.on('close', (code) => {
      const secs = Math.round((Date.now() - started) / 1000);
      console.log(`\n=== ${name}: ${cmd} ${args.join(' ')} (${secs} s)`);
      process.stdout.write(Buffer.concat(chunks));
      const ok = code === 0;
      if (!ok) failures.push(name);
      resolve(ok);
    });
  });
}

/** `retry`: how often a failed test runs again (unit and browser tests: once; the timing-measuring reliability suite: never). */
function vitest(name, config, { retry = 0 } = {}) {
  if (only.length && !only.includes(name)) return;
  const out = path.join(os.tmpdir(), `gaffer-${name}-${process.pid}.json`);
  const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`];
  if (retry > 0) args.push(`--retry=${retry}`);
  if (config) args.push('--config', config);
  const ok = run(name, 'npx', args);
  try {
    const r = JSON.parse(fs.readFileSync(out, 'utf8'));
    passed += r.numPassedTests;
    failed += r.numFailedTests;
    for (const file of r.testResults ?? []) {
      const rel = path.relative(root, file.name ?? '');
      for (const t of file.assertionResults ?? []) {
        // A test that passed on its retry keeps its first attempt's error in the report.
        const why = String(t.failureMessages?.[0] ?? '').split('\n')[0].slice(0, 300);
        const line = `${name}: ${rel} > ${t.fullName ?? t.title}\n    ${why}`;
        if (t.status === 'failed') failedTests.push(line);
        else if (t.status === 'passed' && t.failureMessages?.length) flakyTests.push(line);
      }
      if (file.status === 'failed' && !(file.assertionResults ?? []).some((t) => t.status === 'failed')) {
        failedTests.push(`${name}: ${rel} (the file failed outside a test)\n    ${String(file.message ?? '').split('\n')[0].slice(0, 300)}`);
      }
    }
    if (!ok && r.numFailedTests === 0) failed += 1; // the run failed outside a test (e.g. a suite crashed)
  } catch {
    if (!ok) failed += 1;
  }
}

function chromiumPath() {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const p of ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']) if (fs.existsSync(p)) return p;
  return undefined;
}

function ensureChromium() {
  if (chromiumPath()) return true;
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    console.log('test: installing Debian chromium for the browser tests (apt-get)');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'chromium'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  }
  if (chromiumPath()) return true;
  console.error('test: no Chromium found. Install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH.');
  return false;
}

// The Python SDK (sdk/python) runs on Debian's Python: the pyenv `python3` on PATH may lack the packages.
const SYSTEM_PYTHON = '/usr/bin/python3';
const PYTHON_CHECK = ['-c', 'import websockets, pytest, ensurepip'];

function pythonReady() {
  return fs.existsSync(SYSTEM_PYTHON) && spawnSync(SYSTEM_PYTHON, PYTHON_CHECK, { stdio: 'ignore' }).status === 0;
}

function ensurePython() {
  if (pythonReady()) return true;
  if (process.getuid?.() === 0 && fs.existsSync('/usr/bin/apt-get')) {
    console.log('test: installing Debian python3-websockets, python3-pytest and python3-venv for the Python SDK tests (apt-get)');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'python3', 'python3-websockets', 'python3-pytest', 'python3-venv'], {
      stdio: 'inherit',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
  }
  if (pythonReady()) return true;
  console.error(`test: ${SYSTEM_PYTHON} with websockets and pytest is needed (Debian: apt-get install -y python3-websockets python3-pytest python3-venv).`);
  return false;
}

/**
 * bubblewrap (`bwrap`) for the `gaffer agent --sandbox` test: installed when missing and we can (root with
 * apt). Without it that one test skips and says so in its name; nothing else needs it.
 */
function ensureBubblewrap() {
  const found = () => ['/usr/bin/bwrap', '/bin/bwrap', ...(process.env.PATH ?? '').split(':').map((d) => `${d}/bwrap`)].some((p) => fs.existsSync(p));
  if (found() || process.getuid?.() !== 0 || !fs.existsSync('/usr/bin/apt-get')) return;
  console.log('test: installing Debian bubblewrap for the sandbox test (apt-get)');
  spawnSync('apt-get', ['install', '-y', '-qq', 'bubblewrap'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (!found()) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'bubblewrap'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  }
}

/** pytest of sdk/python; its counts join the total (from its JUnit XML). */
async function pytest(name) {
  if (only.length && !only.includes(name)) return;
  if (!ensurePython()) {
    failed++;
    failures.push(`${name} (no python)`);
    return;
  }
  const out = path.join(os.tmpdir(), `gaffer-${name}-${process.pid}.xml`);
  const ok = await runBuffered(name, SYSTEM_PYTHON, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', '-rs', `--junitxml=${out}`, 'tests'], {
    cwd: path.join(root, 'sdk', 'python'),
    env: { PYTHONDONTWRITEBYTECODE: '1' },
  });
  let counted = false;
  try {
    const xml = fs.readFileSync(out, 'utf8');
    const suite = /<testsuite\b[^>]*>/.exec(xml)?.[0] ?? '';
    const attr = (k) => Number(new RegExp(`\\b${k}="(\\d+)"`).exec(suite)?.[1] ?? 'NaN');
    const [tests, failures_, errors, skipped] = [attr('tests'), attr('failures'), attr('errors'), attr('skipped')];
    if ([tests, failures_, errors, skipped].every(Number.isFinite) && tests > 0) {
      passed += tests - failures_ - errors - skipped;
      failed += failures_ + errors;
      counted = true;
      if (!ok && failures_ + errors === 0) failed += 1; // pytest failed outside a test
    }
    fs.rmSync(out, { force: true });
  } catch {
    /* no report: counted below */
  }
  if (!counted) failed += 1; // no report, or no test ran (pytest exit 5)
}

const count = (ok) => (ok ? passed++ : failed++);
const steps = [
  () =>
    Promise.all([
      runBuffered('typecheck', 'npx', ['tsc', '--noEmit', '-p', 'tsconfig.json']).then(count),
      runBuffered('lint', 'npx', ['eslint', '.']).then(count),
      // Each module-boundary rule fires on a deliberate violation (a rule that went silent fails here).
      runBuffered('lint-rules', 'node', ['scripts/check-lint-rules.mjs']).then(count),
      pytest('python'),
    ]),
  () => {
    ensureBubblewrap();
    vitest('unit', undefined, { retry: 1 });
  },
  () => {
    if (only.length && !only.includes('e2e')) return;
    if (!fs.existsSync('vitest.e2e.config.ts')) return;
    if (!ensureChromium()) {
      failed++;
      failures.push('e2e (no chromium)');
      return;
    }
    if (run('build', 'npx', ['electron-vite', 'build'])) passed++;
    else failed++;
    vitest('e2e', 'vitest.e2e.config.ts', { retry: 1 });
  },
  () => fs.existsSync('vitest.reliability.config.ts') && vitest('reliability', 'vitest.reliability.config.ts'),
];
for (const step of steps) await step();

if (flakyTests.length) console.log(`\npassed only on a second try (flaky; fix them):\n${flakyTests.map((t) => `  ${t}`).join('\n')}`);
if (failedTests.length) console.log(`\nfailed tests:\n${failedTests.map((t) => `  ${t}`).join('\n')}`);
if (failures.length) console.log(`\nfailed steps: ${failures.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
