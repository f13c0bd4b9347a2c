#!/usr/bin/env node
/**
 * The `gaffer` command (`npx gaffer …` in this repository after `npm install`).
 * Loads the TypeScript sources through tsx, so no build step is needed; the subcommands live in
 * src-main/cli/ (see `gaffer --help`).
 */
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src-main/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
