#!/usr/bin/env node
/**
 * The `gaffer` command (`npx gaffer …` in this repository after `npm install`).
 * Loads the TypeScript sources through tsx, so no build step is needed; the subcommands live in
 * src-main/cli/ (see `gaffer --help`).
 *
 * First of all, the tokens leave this process's environment (PROTOCOL §17,
 * lib/process-secrets.mjs): tsx starts an esbuild service process that would inherit them, and
 * so would every command an agent runs. The subcommands read them with `takeProcessSecrets()`.
 */
import { takeProcessSecrets } from './lib/process-secrets.mjs';
import { restoreUserUmask } from './lib/umask.mjs';

takeProcessSecrets();
restoreUserUmask();
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('../src-main/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
