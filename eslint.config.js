// Lint, including the layering rules. The folders carry the architecture:
//
//   common  ←  core  ←  server  ←  { electron, headless }
//   common  ←  { sdk, preload, renderer }
//   common  ←  sdk  ←  cli (the `gaffer` command: agent, mcp)
//
// A wrong import fails lint with a message naming which layer may import which.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

const layer = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

const NODE_ONLY = ['node:*', 'better-sqlite3', 'ws', 'electron'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'release/**', '.scratch/**', 'bench/.scratch/**', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      'import-x/no-cycle': ['error', { maxDepth: 10, ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      'no-empty': ['error', { allowEmptyCatch: false }],
    },
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.tsx', '.js', '.mjs'] } } },
  },
  {
    // Tests, test kits, benchmarks and e2e read untyped JSON off the wire; `any` is the honest type there.
    files: ['**/*.test.ts', '**/*.test.tsx', '**/*.testkit.ts', 'bench/**', 'e2e/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // Plain Node scripts (not type-checked TS): declare Node's globals.
    files: ['scripts/**/*.mjs', 'e2e/**/*.mjs', '*.js', '*.mjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', __dirname: 'readonly' },
    },
  },
  layer(['src-main/common/**'], [
    { group: ['**/core/**', '**/server/**', '**/electron/**', '**/headless/**', '**/sdk/**'], message: 'common is the bottom layer: it imports nothing from core, server, electron, headless or sdk.' },
    { group: NODE_ONLY, message: 'common is shared with the renderer: no Node-only or Electron modules.' },
  ]),
  layer(['src-main/core/**'], [
    { group: ['electron', '**/electron/**'], message: 'the core never imports electron: it runs in plain Node (headless, tests).' },
    { group: ['**/server/**', '**/headless/**', '**/sdk/**', '**/src-renderer/**', '**/src-preload/**'], message: 'core may import only common: server, shells, sdk and UI sit above it.' },
  ]),
  layer(['src-main/server/**'], [
    { group: ['electron', '**/electron/**', '**/headless/**', '**/src-renderer/**', '**/src-preload/**'], message: 'server sits on core + common; the shells (electron, headless) import it, not the other way round.' },
  ]),
  layer(['src-main/headless/**'], [
    { group: ['electron', '**/electron/**', '**/src-renderer/**', '**/src-preload/**'], message: 'headless is a plain Node shell: no electron, no UI code.' },
  ]),
  layer(['src-main/electron/**'], [
    { group: ['**/headless/**', '**/src-renderer/**', '**/src-preload/**'], message: 'the electron shell uses core and server; it loads the preload and renderer as files, never imports them.' },
  ]),
  layer(['src-main/sdk/**', 'examples/**'], [
    { group: ['**/core/**', '**/server/**', '**/electron/**', '**/headless/**', 'better-sqlite3', 'electron'], message: 'the agent SDK talks to Gaffer over the wire only: it may import common and ws.' },
  ]),
  layer(['src-main/cli/**'], [
    { group: ['**/core/**', '**/server/**', '**/electron/**', '**/headless/**', '**/src-renderer/**', '**/src-preload/**', 'better-sqlite3', 'electron'], message: 'the gaffer command-line programs are agents and clients: they reach the scheduler over the wire (sdk + common), never by importing it.' },
  ]),
  layer(['src-preload/**'], [
    { group: ['**/src-main/core/**', '**/src-main/server/**', '**/src-main/electron/**', '**/src-main/headless/**', '**/src-renderer/**', 'node:*', 'better-sqlite3', 'ws'], message: 'the preload is a sandboxed bridge: electron IPC plus common types only.' },
  ]),
  layer(['src-renderer/**'], [
    { group: ['**/src-main/core/**', '**/src-main/server/**', '**/src-main/electron/**', '**/src-main/headless/**', '**/src-main/sdk/**', '**/src-preload/**', ...NODE_ONLY], message: 'the renderer reaches the scheduler only through the ConsoleApi (src-main/common/console-api.ts).' },
  ]),
);
