/** `gaffer mcp` options: the command line plus the tokens from the environment (never from a flag). */

export const DEFAULT_AGENT_URL = 'ws://127.0.0.1:7311/agent';
export const DEFAULT_API_URL = 'http://127.0.0.1:7311';

export type McpOptions =
  | { mode: 'agent'; role: string; url: string; name: string; token: string; jobs: boolean }
  | { mode: 'operator'; url: string; token: string };

export const MCP_USAGE = `usage: gaffer mcp --role ROLE [--url WS_URL] [--name NAME] [--jobs]
       gaffer mcp --operator [--url HTTP_URL]

A Model Context Protocol server on stdin/stdout, for an MCP host (Claude Code, Codex, …).

Agent mode (--role): the MCP client becomes a Gaffer agent of ROLE. Tools claim, renew and report
tasks, create tasks idempotently, and send log lines and usage; with --jobs the session also takes
job runs of the role (next_run, checkpoint_step, finish_run; a retried run that comes back is a new
attempt). Without --jobs the session tells Gaffer it takes no job runs, and is never offered one.
Locks are renewed while the session is open; when it ends, tasks still held go back to the backlog.
  GAFFER_TOKEN   the agent token (required; never a flag, never logged)
  --url          the agent socket (default GAFFER_URL, else ${DEFAULT_AGENT_URL})
  --name         the instance name shown to the operator (default mcp-ROLE-PID)

Operator mode (--operator): read-only tools over the HTTP API — status, why a job did or did not
run at a time, recent runs and failures, tasks, audit search.
  GAFFER_OPERATOR_TOKEN   the operator token (required)
  --url                   the HTTP API base (default ${DEFAULT_API_URL})`;

export class UsageError extends Error {}

/** Parses argv (after `mcp`) and the environment; throws UsageError with a one-line reason. */
export function parseMcpArgs(argv: readonly string[], env: NodeJS.ProcessEnv): McpOptions {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (name === '--operator' || name === '--jobs') {
      flags.set(name, true);
      continue;
    }
    if (name !== '--role' && name !== '--url' && name !== '--name') throw new UsageError(`unknown option ${arg}`);
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
    flags.set(name, value);
  }
  const str = (k: string) => {
    const v = flags.get(k);
    return typeof v === 'string' ? v : undefined;
  };

  if (flags.has('--operator')) {
    if (flags.has('--role') || flags.has('--jobs')) throw new UsageError('--operator takes no --role or --jobs (it is read-only)');
    const token = env.GAFFER_OPERATOR_TOKEN;
    if (!token) throw new UsageError('GAFFER_OPERATOR_TOKEN is not set (operator mode needs the operator token)');
    return { mode: 'operator', url: httpBase(str('--url') ?? DEFAULT_API_URL), token };
  }
  const role = str('--role');
  if (!role) throw new UsageError('--role is required (or --operator)');
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(role)) throw new UsageError(`--role "${role}" is not a role name (letters, digits, _ . -)`);
  const token = env.GAFFER_TOKEN;
  if (!token) throw new UsageError('GAFFER_TOKEN is not set (create an agent token: POST /api/v1/tokens)');
  return {
    mode: 'agent',
    role,
    url: str('--url') ?? env.GAFFER_URL ?? DEFAULT_AGENT_URL,
    name: str('--name') ?? `mcp-${role}-${process.pid}`,
    token,
    jobs: flags.has('--jobs'),
  };
}

/** `http://127.0.0.1:7311`, `…/api/v1` or a `ws://…/agent` URL → the HTTP base (no trailing slash). */
export function httpBase(input: string): string {
  let u: URL;
  try {
    u = new URL(input);
  } catch {
    throw new UsageError(`--url "${input}" is not a URL`);
  }
  if (u.protocol === 'ws:') u.protocol = 'http:';
  else if (u.protocol === 'wss:') u.protocol = 'https:';
  else if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new UsageError(`--url "${input}": use http://host:port`);
  if (u.username || u.password || u.search) throw new UsageError('--url takes no credentials or query (the token comes from GAFFER_OPERATOR_TOKEN)');
  return `${u.protocol}//${u.host}`;
}
