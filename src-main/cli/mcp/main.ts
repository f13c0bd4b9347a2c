/**
 * `gaffer mcp`: a Model Context Protocol server over stdio, so an MCP host (Claude Code, Codex,
 * any MCP client) can be a Gaffer agent (`--role R`), or answer the operator's questions
 * (`--operator`, read-only).
 *
 * Invariants:
 * 1. Stdout is the MCP channel: only the transport writes to it. Everything else — the SDK's log,
 *    stray `console.log`s of any module — goes to stderr.
 * 2. Tokens come from the environment only (GAFFER_TOKEN, GAFFER_OPERATOR_TOKEN, or their `_FD`
 *    hand-off pipes), leave it before anything starts (scripts/gaffer.mjs, PROTOCOL §17) and are
 *    never printed; the agent token travels in the socket's Authorization header (the SDK's rule).
 * 3. The session ends when the client closes stdin, or on SIGINT/SIGTERM: tasks still held go back
 *    to the backlog and the socket is closed before the process exits.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Logger } from '../../common/logger';
import { connect } from '../../sdk';
import { environmentWithTokens, tokenWarnings } from '../secrets';
import { AgentSession } from './agent-session';
import { AGENT_INSTRUCTIONS, registerAgentTools } from './agent-tools';
import { MCP_USAGE, parseMcpArgs, UsageError, type McpOptions } from './args';
import { apiClient, OPERATOR_INSTRUCTIONS, registerOperatorTools } from './operator-tools';

const VERSION = process.env.npm_package_version ?? '0.1.0';

/** The SDK's log lines, on stderr (invariant 1). */
const stderrLogger: Logger = {
  info: (m, f) => process.stderr.write(`gaffer mcp: ${m}${f ? ` ${JSON.stringify(f)}` : ''}\n`),
  warn: (m, f) => process.stderr.write(`gaffer mcp: warning: ${m}${f ? ` ${JSON.stringify(f)}` : ''}\n`),
  error: (m, f) => process.stderr.write(`gaffer mcp: error: ${m}${f ? ` ${JSON.stringify(f)}` : ''}\n`),
};

/** Invariant 1: in this process console output of any module goes to stderr. */
function keepStdoutForMcp(): void {
  const toStderr = (...args: unknown[]) => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

export async function runMcp(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${MCP_USAGE}\n`);
    return 0;
  }
  let opts: McpOptions;
  try {
    opts = parseMcpArgs(argv, environmentWithTokens());
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`gaffer mcp: ${e.message}\n\n${MCP_USAGE}\n`);
    return 2;
  }
  keepStdoutForMcp();
  for (const w of tokenWarnings()) stderrLogger.warn(w);

  let close: () => Promise<void> = async () => {};
  let server: McpServer;
  if (opts.mode === 'agent') {
    let agent;
    try {
      // Without --jobs the session takes no runs, and says so: Gaffer never offers it a trigger it would let lapse.
      agent = await connect({ url: opts.url, token: opts.token, role: opts.role, name: opts.name, version: VERSION, takesRuns: opts.jobs, logger: stderrLogger });
    } catch (e) {
      process.stderr.write(`gaffer mcp: cannot connect to ${opts.url}: ${e instanceof Error ? e.message : String(e)}\n`);
      return 1;
    }
    const session = new AgentSession(agent, { jobs: opts.jobs });
    server = new McpServer({ name: 'gaffer-agent', version: VERSION }, { instructions: AGENT_INSTRUCTIONS });
    registerAgentTools(server, session, opts.role);
    close = () => session.close();
  } else {
    server = new McpServer({ name: 'gaffer-operator', version: VERSION }, { instructions: OPERATOR_INSTRUCTIONS });
    registerOperatorTools(server, apiClient(opts.url, opts.token));
  }

  const transport = new StdioServerTransport();
  const ended = new Promise<string>((resolve) => {
    process.stdin.once('end', () => resolve('the MCP client closed stdin'));
    process.stdin.once('close', () => resolve('the MCP client closed stdin'));
    transport.onclose = () => resolve('the transport closed');
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => resolve(sig));
  });
  await server.connect(transport);
  stderrLogger.info(opts.mode === 'agent' ? `serving MCP as an agent of role ${opts.role}` : 'serving MCP in operator mode (read-only)');
  const why = await ended;
  stderrLogger.info(`shutting down: ${why}`);
  await close();
  await server.close().catch(() => {});
  // Everything is closed; a timer a library left behind (the SDK's close waits with plain
  // timeouts) must not keep the process — and the client waiting for it — alive for seconds.
  setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref();
  return 0;
}
