// Lint, including the layering rules. The folders carry the architecture:
//
//   common  ←  core  ←  server  ←  { electron, headless }
//   common  ←  { sdk, preload, renderer }
//   common  ←  sdk  ←  cli (the `gaffer` command: agent, mcp)
//   renderer: { lib, transport }  ←  { components, store }  ←  features  ←  app  ←  main.tsx
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

const RENDERER = [
  { group: ['**/src-main/core/**', '**/src-main/server/**', '**/src-main/electron/**', '**/src-main/headless/**', '**/src-main/sdk/**', '**/src-preload/**', ...NODE_ONLY], message: 'the renderer reaches the scheduler only through the ConsoleApi (src-main/common/console-api.ts).' },
];
// What each renderer floor must not import: every floor above it.
const RENDERER_ABOVE = {
  features: ['**/app/**', '../../app', '**/main', '../../main'],
};
RENDERER_ABOVE.store = [...RENDERER_ABOVE.features, '**/features/**', '**/components/**', '../components', '../../components'];
RENDERER_ABOVE.components = [...RENDERER_ABOVE.features, '**/features/**', '**/store/**', '../store'];
RENDERER_ABOVE.lib = [...RENDERER_ABOVE.store, '**/store/**', '../store'];

// Inside the core (docs/architecture.md, "Module interfaces"): the folders stand in floors, and a
// floor imports only floors below it (or its own). Lower first.
const CORE = 'src-main/core';
const CORE_FLOORS = [
  ['events.ts', 'ids.ts', 'sql-where.ts', 'wiring.ts'],
  ['db'],
  ['audit', 'secrets'],
  ['time'],
  ['context.ts'],
  ['auth', 'signals', 'tasks', 'notify'],
  ['instances', 'managed'],
  ['hub'],
  ['jobs'],
  ['inbox', 'logs'],
  ['budgets', 'verify'],
  ['create-core.ts'],
].map((floor) => floor.map((f) => `${CORE}/${f}`));
const coreFloorZones = CORE_FLOORS.slice(0, -1).map((floor, i) => ({
  target: floor,
  from: CORE_FLOORS.slice(i + 1).flat(),
  message: 'a floor of the core imports only the floors below it (eslint.config.js, CORE_FLOORS): hand what is needed from above in when the module is built (core/wiring.ts for a need that closes a loop).',
}));
// A module with an index.ts is imported by the rest of the core only through it: its interface.
const CORE_MODULES = ['auth', 'budgets', 'hub', 'inbox', 'instances', 'jobs', 'logs', 'managed', 'notify', 'secrets', 'signals', 'tasks', 'verify'];
const coreModuleZones = CORE_MODULES.map((m) => ({
  target: [`${CORE}/!(${m})/**`, `${CORE}/*.ts`],
  from: `${CORE}/${m}`,
  // The rehearsal is the jobs module's second face (its own index.ts): it builds the jobs module inside.
  except: m === 'jobs' ? ['./index.ts', './rehearse/index.ts'] : ['./index.ts'],
  message: `the rest of the core imports ${m}/ only through ${m}/index.ts, its declared interface.`,
}));
// Test kits (tests/ folders, *.testkit.ts, testing/ folders) are for tests: production code never imports one.
const testKitZone = {
  target: ['src-main/**', 'src-renderer/**', 'src-preload/**'],
  from: ['**/tests/**', '**/*.testkit.ts', '**/testing/**'],
  message: 'test kits are for tests (*.test.ts, tests/ folders, e2e, bench): production code never imports one.',
};
// SQL lives in the core's store files; the server, the shells and the CLI reach the database only
// through the core's read models and services.
const NO_SQL_OUTSIDE_CORE = [
  { selector: "CallExpression[callee.property.name='prepare']", message: 'no SQL here: the statement belongs in the owning core module\'s store file (exposed as a read model, e.g. core.reads).' },
  { selector: "CallExpression[callee.property.name='exec'][callee.object.type!='Literal']:not([callee.object.regex])", message: 'no SQL here: the statement belongs in the owning core module\'s store file.' },
  { selector: "MemberExpression[property.name='db'][object.name='core']", message: 'the server does not touch core.db: use the core\'s read models (core.reads) and services.' },
];
// Inside the core, SQL lives only in a module's store files: `store.ts`, `*-store.ts`, `repo.ts`,
// `*-repo.ts`, and `db/` (docs/architecture.md, "Module interfaces"). A service calls its store's
// named methods; the statements are prepared once, when the store is built. `.transaction(` is
// allowed anywhere: it wraps code, it carries no SQL. A regular expression's `.exec(` is told apart
// by its name: a literal, or a constant named `…RE`.
const CORE_STORE_FILES = ['store.ts', '*-store.ts', 'repo.ts', '*-repo.ts'].map((f) => `${CORE}/**/${f}`);
const NO_SQL_OUTSIDE_STORES = [
  { selector: "CallExpression[callee.property.name='prepare']", message: 'no SQL here: inside the core, SQL lives only in the module\'s store files (store.ts, *-store.ts, repo.ts, *-repo.ts, db/); call a named method of the store.' },
  { selector: "CallExpression[callee.property.name='exec'][callee.object.type!='Literal']:not([callee.object.regex]):not([callee.object.name=/RE$/])", message: 'no SQL here: inside the core, SQL lives only in the module\'s store files (a regular expression constant is named …RE).' },
  { selector: "CallExpression[callee.property.name='pragma']", message: 'no SQL here: inside the core, a pragma lives only in the module\'s store files or db/.' },
];

export default tseslint.config(
  { ignores: ['node_modules/**', 'out/**', 'dist/**', 'sdk/typescript/dist/**', 'release/**', '.scratch/**', 'bench/.scratch/**', 'test-results/**', 'playwright-report/**'] },
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
    files: ['scripts/**/*.mjs', 'bench/**/*.mjs', 'e2e/**/*.mjs', 'sdk/**/*.mjs', '*.js', '*.mjs'],
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
  layer(['src-main/sdk/**', 'sdk/typescript/src/**', 'examples/**'], [
    { group: ['**/core/**', '**/server/**', '**/electron/**', '**/headless/**', 'better-sqlite3', 'electron'], message: 'the agent SDK talks to Gaffer over the wire only: it may import common and ws.' },
  ]),
  layer(['src-main/cli/**'], [
    // (The MCP SDK's own `…/server/…` modules are a library, not Gaffer's server layer.)
    { group: ['**/core/**', '**/server/**', '**/electron/**', '**/headless/**', '**/src-renderer/**', '**/src-preload/**', 'better-sqlite3', 'electron', '!@modelcontextprotocol/sdk/**'], message: 'the gaffer command-line programs are agents and clients: they reach the scheduler over the wire (sdk + common), never by importing it.' },
  ]),
  layer(['src-preload/**'], [
    { group: ['**/src-main/core/**', '**/src-main/server/**', '**/src-main/electron/**', '**/src-main/headless/**', '**/src-renderer/**', 'node:*', 'better-sqlite3', 'ws'], message: 'the preload is a sandboxed bridge: electron IPC plus common types only.' },
  ]),
  layer(['src-renderer/**'], RENDERER),
  // Inside the renderer, the folders are floors too (docs/architecture.md, "The renderer"):
  //   main.tsx  ←  app  ←  features  ←  { store, components }  ←  { lib, transport }
  // Each rule repeats RENDERER: a later rule for the same files replaces an earlier one.
  layer(['src-renderer/lib/**', 'src-renderer/transport/**'], [
    ...RENDERER,
    { group: [...RENDERER_ABOVE.lib, '**/transport/**', '../transport'], message: 'lib and transport are the renderer\'s ground floor: they import common (and lib its own files), nothing else of the renderer.' },
  ]),
  layer(['src-renderer/components/**'], [
    ...RENDERER,
    { group: [...RENDERER_ABOVE.components, '**/transport/**', '../transport'], message: 'components are presentational (props in, events out): they may import lib, never the store, a feature, the shell or the transport.' },
  ]),
  layer(['src-renderer/store/**'], [
    ...RENDERER,
    { group: [...RENDERER_ABOVE.store, '**/transport/**', '../transport', '../../transport'], message: 'the store sits on lib and common (the ConsoleApi is handed to it): it never imports components, features, the shell or the transport.' },
  ]),
  layer(['src-renderer/store/slices/**'], [
    ...RENDERER,
    { group: [...RENDERER_ABOVE.store, '**/transport/**', '../../transport', '../console-store', '../types', '../react'], message: 'a slice is given its context by the root store (store/slice.ts): it imports the slice kit, lib and common, never the root store, the React binding or an upper floor.' },
    { regex: '^\\./', message: 'slices are beside each other: a slice reaches another only by topic (ctx.refresh / ctx.invalidate), never by importing it.' },
  ]),
  {
    // A slice's own test drives it through the root store.
    files: ['src-renderer/store/slices/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: RENDERER }] },
  },
  layer(['src-renderer/features/**'], [
    ...RENDERER,
    { group: [...RENDERER_ABOVE.features, '**/transport/**', '../../transport'], message: 'a feature uses the store, components and lib; it never imports the shell (app/, main) or the transport.' },
    { regex: '^\\.\\./(?!\\.\\./)|(^|/)features/', message: 'features are beside each other: a feature never imports another feature; move what both need down to components/, lib/ or the store.' },
  ]),
  layer(['src-renderer/app/**'], [...RENDERER, { group: ['**/main', '../main'], message: 'main.tsx is the entry: nothing imports it.' }]),
  // The renderer's test kit (src-renderer/testing/) runs the real console in-process for tests: it
  // alone may import the core and the server (never a shell or the preload).
  layer(['src-renderer/testing/**'], [
    { group: ['electron', '**/electron/**', '**/headless/**', '**/src-preload/**'], message: 'the renderer test kit runs the core and the console method table in-process; it never imports a shell or the preload.' },
  ]),
  {
    // Production code only: tests and their kits may reach into any file they test.
    files: ['src-main/**/*.ts', 'src-renderer/**/*.{ts,tsx}', 'src-preload/**/*.ts'],
    ignores: ['**/*.test.ts', '**/*.test.tsx', '**/tests/**', '**/testing/**', '**/*.testkit.ts'],
    rules: { 'import-x/no-restricted-paths': ['error', { zones: [...coreFloorZones, ...coreModuleZones, testKitZone] }] },
  },
  {
    files: ['src-main/server/**/*.ts', 'src-main/electron/**/*.ts', 'src-main/headless/**/*.ts', 'src-main/cli/**/*.ts'],
    ignores: ['**/*.test.ts', '**/tests/**', '**/*.testkit.ts'],
    rules: { 'no-restricted-syntax': ['error', ...NO_SQL_OUTSIDE_CORE] },
  },
  {
    files: [`${CORE}/**/*.ts`],
    ignores: ['**/*.test.ts', `${CORE}/tests/**`, '**/*.testkit.ts', `${CORE}/db/**`, ...CORE_STORE_FILES],
    rules: { 'no-restricted-syntax': ['error', ...NO_SQL_OUTSIDE_STORES] },
  },
);
