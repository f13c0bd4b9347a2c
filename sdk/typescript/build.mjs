#!/usr/bin/env node
/**
 * Builds the installable `gaffer-agent` package from the SDK's sources (src-main/sdk):
 *
 *   node sdk/typescript/build.mjs              → sdk/typescript/dist/ (index.js, index.d.ts, package.json, README.md)
 *   node sdk/typescript/build.mjs --pack DIR   → also `npm pack` it into DIR; prints the tarball's path last
 *
 * Invariants (the build fails when one does not hold):
 * 1. The package's dependencies are the npm packages the SDK's sources import — `ws` (the socket)
 *    and `zod` (the protocol's frame schemas in src-main/common, which the SDK parses pushes with
 *    and infers its push types from); never Electron, better-sqlite3 or anything of the server.
 *    Everything the SDK imports from Gaffer's source is bundled into one ES module, which imports
 *    nothing but those dependencies and Node built-ins.
 * 2. The declarations are one `index.d.ts` that imports nothing but those dependencies.
 * 3. dist/package.json is made from this directory's package.json (same name, version and
 *    dependencies), pointing at the built files instead of the sources.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import dtsBundleGenerator from 'dts-bundle-generator';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const dist = path.join(here, 'dist');
const entry = path.join(here, 'src', 'index.ts');
const source = JSON.parse(fs.readFileSync(path.join(here, 'package.json'), 'utf8'));

function fail(message) {
  console.error(`gaffer-agent build: ${message}`);
  process.exit(1);
}

for (const heavy of ['electron', 'better-sqlite3']) if (heavy in source.dependencies) fail(`${heavy} must not be a dependency of the agent SDK`);

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });

// 1. JavaScript: one ES module; the dependencies stay external.
const js = await build({
  entryPoints: [entry],
  outfile: path.join(dist, 'index.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  external: Object.keys(source.dependencies),
  metafile: true,
  legalComments: 'eof',
  logLevel: 'warning',
});
const imported = Object.values(js.metafile.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path));
const foreign = [...new Set(imported)].filter((p) => !p.startsWith('node:') && !(p in source.dependencies));
if (foreign.length) fail(`the bundle imports ${foreign.join(', ')}; only ${Object.keys(source.dependencies).join(', ')} may stay external`);

// 2. Declarations: one file, only what the entry exports.
const [dts] = dtsBundleGenerator.generateDtsBundle([{ filePath: entry, output: { noBanner: true } }], {
  preferredConfigPath: path.join(root, 'tsconfig.json'),
});
const dtsImports = [...dts.matchAll(/^\s*import\b[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
const foreignTypes = dtsImports.filter((p) => !(p in source.dependencies));
if (foreignTypes.length) fail(`index.d.ts imports ${foreignTypes.join(', ')}; only the dependencies may be imported`);
fs.writeFileSync(path.join(dist, 'index.d.ts'), `// gaffer-agent ${source.version}: the Gaffer agent SDK.\n${dts}`);

// 3. The published package.json and README.
const published = {
  name: source.name,
  version: source.version,
  description: source.description,
  license: source.license,
  type: 'module',
  main: './index.js',
  types: './index.d.ts',
  exports: { '.': { types: './index.d.ts', default: './index.js' } },
  files: ['index.js', 'index.d.ts', 'README.md'],
  sideEffects: false,
  engines: source.engines,
  dependencies: source.dependencies,
};
fs.writeFileSync(path.join(dist, 'package.json'), `${JSON.stringify(published, null, 2)}\n`);
fs.copyFileSync(path.join(here, 'README.md'), path.join(dist, 'README.md'));

const packIndex = process.argv.indexOf('--pack');
if (packIndex >= 0) {
  const dest = path.resolve(process.argv[packIndex + 1] ?? '.');
  fs.mkdirSync(dest, { recursive: true });
  const out = execFileSync('npm', ['pack', dist, '--pack-destination', dest, '--json'], { encoding: 'utf8' });
  const [{ filename }] = JSON.parse(out);
  console.log(path.join(dest, filename));
} else {
  console.log(`gaffer-agent build: ${path.relative(root, dist)}/ (index.js ${Math.round(fs.statSync(path.join(dist, 'index.js')).size / 1024)} KiB)`);
}
