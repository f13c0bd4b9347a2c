/**
 * `gaffer <command> [options]`: one entry point for the programs that sit beside the scheduler.
 * Each subcommand is its own module, loaded only when it is named, so `gaffer --help` stays fast
 * and one subcommand's dependencies never load for another.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { secretPipes } from '../../scripts/lib/process-secrets.mjs';
import { processToken } from './secrets';

interface Subcommand {
  summary: string;
  /** Runs the subcommand with the arguments after its name; resolves to the exit status. */
  run(argv: string[]): Promise<number>;
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * `gaffer start …` is `npm start -- …`: the desktop app, or the headless console where it cannot
 * start. The operator token goes to it over a pipe, never in its environment (PROTOCOL §17).
 */
function startScript(argv: string[]): Promise<number> {
  return new Promise((resolve) => {
    const pipes = secretPipes({ GAFFER_OPERATOR_TOKEN: processToken('GAFFER_OPERATOR_TOKEN') }, ['inherit', 'inherit', 'inherit'], process.env);
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'start.mjs'), ...argv], { stdio: pipes.stdio, env: pipes.env });
    void pipes.send(child);
    const forward = (sig: NodeJS.Signals) => child.kill(sig);
    process.on('SIGINT', forward).on('SIGTERM', forward);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

export const SUBCOMMANDS: Record<string, Subcommand> = {
  start: { summary: 'run Gaffer (the desktop app; headless on 127.0.0.1 where Electron cannot start) — same options as npm start', run: startScript },
  agent: { summary: 'run any command as an agent: claims tasks and job triggers of a role, runs COMMAND for each', run: async (argv) => (await import('./agent')).runAgentCommand(argv) },
  mcp: { summary: 'a Model Context Protocol server on stdio: an MCP client becomes an agent (--role R), or reads status (--operator)', run: async (argv) => (await import('./mcp/main')).runMcp(argv) },
};

export function usage(): string {
  const width = Math.max(...Object.keys(SUBCOMMANDS).map((n) => n.length));
  const lines = Object.entries(SUBCOMMANDS).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return ['usage: gaffer <command> [options]', '', 'commands:', ...lines, '', 'gaffer <command> --help shows the options of one command.'].join('\n');
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  const command = SUBCOMMANDS[name];
  if (!command) {
    process.stderr.write(`gaffer: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  return command.run(rest);
}
