/**
 * `gaffer agent … -- COMMAND [ARGS…]` (PROTOCOL §6, docs/command-agent.md): any program becomes an
 * agent. This file is the process wiring (arguments, signals, stdin); command-agent.ts does the work.
 */
import { environmentWithTokens, tokenWarnings } from '../secrets';
import { CommandAgent } from './command-agent';
import { agentHelp, parseAgentArgs, UsageError } from './options';

export async function runAgentCommand(argv: string[]): Promise<number> {
  let opts;
  try {
    opts = parseAgentArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`gaffer agent: ${e.message}\n`);
    return 2;
  }
  if (opts === 'help') {
    process.stdout.write(`${agentHelp()}\n`);
    return 0;
  }
  // Under a supervisor our stdout/stderr are pipes to it. When it dies (that is when the lifeline
  // matters) writing to them fails with EPIPE: that must not crash us before the commands are ended.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
  // PROTOCOL §17: the token is no longer in this process's environment (scripts/gaffer.mjs took it).
  for (const w of tokenWarnings()) process.stderr.write(`gaffer agent: warning: ${w}\n`);
  const agent = new CommandAgent(opts, {
    env: environmentWithTokens(),
    writeErr: (t) => process.stderr.write(t),
    stdin: process.stdin,
    version: process.env.npm_package_version ?? '0.1.0',
  });
  // First Ctrl-C / SIGTERM: finish within the grace; a second one: stop the commands now.
  const onSignal = (sig: NodeJS.Signals) => {
    process.stderr.write(`gaffer agent: ${sig}: ${agentIsStopping ? 'stopping the running commands now' : 'no new work; finishing what runs (again to stop it now)'}\n`);
    agent.shutdown(agentIsStopping ? 'now' : 'graceful');
    agentIsStopping = true;
  };
  let agentIsStopping = false;
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal).on('SIGHUP', onSignal);
  try {
    return await agent.run();
  } finally {
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal).off('SIGHUP', onSignal);
    if (!process.stdin.destroyed) process.stdin.destroy();
  }
}
