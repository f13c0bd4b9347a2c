/**
 * The commands that start an agent with a fresh token, written to work as printed: this server's
 * agent URL, the whole secret, the role. Three ways in: the worker example of this checkout, the
 * command agent (any program becomes an agent: `node scripts/gaffer.mjs agent … -- your-cli`; not
 * through npx, which would stay alive with the token in its environment) and the Python
 * package (`pip install ./sdk/python`).
 */
import type { COMMAND_AGENT_PARSE_FORMATS, ManagedAgentInput } from '../../src-main/common/managed-agents';

export interface AgentCommand {
  id: 'claude' | 'codex' | 'worker' | 'command' | 'python';
  title: string;
  /** What it is for, in one line. */
  about: string;
  /** The shell text, one command per line, exactly as it is to be run. */
  text: string;
}

/** Quotes a value for a POSIX shell when it needs it. */
export function shellQuote(v: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(v) ? v : `'${v.replace(/'/g, `'\\''`)}'`;
}

/**
 * The agent WebSocket URL of this server: the port Gaffer reports (the desktop app, whose page is
 * not served over HTTP), else the host this page came from.
 */
export function agentUrl(port: number | null | undefined, location: { protocol: string; host: string } | null): string {
  if (location && (location.protocol === 'http:' || location.protocol === 'https:') && location.host) {
    return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/agent`;
  }
  return `ws://127.0.0.1:${port ?? 7311}/agent`;
}

/**
 * The CLI recipes (docs/command-agent.md): the prompt and the task reach the CLI on its stdin,
 * never on its command line (where `ps` shows it); an answered question continues the session.
 */
const PROMPT = '{ echo "Work on this task: $GAFFER_TASK_TITLE. The whole task as JSON:"; cat; }';
export const CLAUDE_RECIPE = `if [ -n "$GAFFER_RESUME_SESSION" ]; then exec claude --resume "$GAFFER_RESUME_SESSION" -p "$GAFFER_APPROVAL_NOTE" --output-format stream-json --verbose --permission-mode acceptEdits; fi; ${PROMPT} | claude -p --output-format stream-json --verbose --permission-mode acceptEdits`;
export const CODEX_RECIPE = `if [ -n "$GAFFER_RESUME_SESSION" ]; then exec codex exec --json --full-auto resume "$GAFFER_RESUME_SESSION" "$GAFFER_APPROVAL_NOTE"; fi; ${PROMPT} | codex exec --json --full-auto -`;

/** The coding CLIs Gaffer connects: how their output is read (`--parse`) and the recipe that runs them. */
export const CLI_AGENTS = {
  claude: { title: 'Connect Claude Code', parse: 'claude-stream-json', recipe: CLAUDE_RECIPE },
  codex: { title: 'Connect Codex', parse: 'codex-json', recipe: CODEX_RECIPE },
} as const satisfies Record<string, { title: string; parse: (typeof COMMAND_AGENT_PARSE_FORMATS)[number]; recipe: string }>;
export type CliAgent = keyof typeof CLI_AGENTS;
/** A CLI run's time limit (seconds): a coding task may take a while, but not forever. */
const CLI_TIMEOUT_S = 1800;

/** The agent's name: after the role and the CLI (`dev-claude`), never after the command line. */
export function cliAgentName(cli: CliAgent, role: string): string {
  return `${role.slice(0, 63 - cli.length)}-${cli}`;
}

/**
 * The managed agent that runs `cli` on each task of `role` — the printed command of
 * `agentCommands`, kept by Gaffer instead: the same recipe through the shell (the task's JSON, the
 * payload file's content, reaches the CLI on its stdin, not on its command line), the same
 * `--parse` and time limit. Its instances are called `<role>-<cli>-1`, ….
 */
export function managedCliAgent(cli: CliAgent, role: string, cwd?: string): Omit<ManagedAgentInput, 'reason'> {
  const a = CLI_AGENTS[cli];
  return { name: cliAgentName(cli, role), role, command: [a.recipe], mode: 'per_task', instances: 1, shell: true, parse: a.parse, timeoutS: CLI_TIMEOUT_S, ...(cwd ? { cwd } : {}) };
}

export function agentCommands(o: { url: string; token: string; role: string }): AgentCommand[] {
  const url = shellQuote(o.url);
  const token = shellQuote(o.token);
  const role = shellQuote(o.role);
  // The instance is named after the role (and the CLI), not after the command line.
  const cli = (name: CliAgent) =>
    `GAFFER_TOKEN=${token} node scripts/gaffer.mjs agent --url ${url} --role ${role} --name ${shellQuote(cliAgentName(name, o.role))} --parse ${CLI_AGENTS[name].parse} --timeout-s ${CLI_TIMEOUT_S} --shell -- ${shellQuote(CLI_AGENTS[name].recipe)}`;
  return [
    {
      id: 'claude',
      title: CLI_AGENTS.claude.title,
      about: 'Run in the Gaffer checkout: Claude Code works each task, its conversation, tokens and cost read from its stream; answering a question it asked continues the same conversation.',
      text: cli('claude'),
    },
    {
      id: 'codex',
      title: CLI_AGENTS.codex.title,
      about: 'Run in the Gaffer checkout: the Codex CLI works each task (codex exec --json), resumed with your answer when it asked one.',
      text: cli('codex'),
    },
    {
      id: 'worker',
      title: 'Worker example',
      about: 'Run in the Gaffer checkout: claims tasks of the role and works them (examples/worker-agent.ts).',
      text: `GAFFER_URL=${url} GAFFER_TOKEN=${token} GAFFER_ROLE=${role} npx tsx examples/worker-agent.ts`,
    },
    {
      id: 'command',
      title: 'Connect a script (any program as an agent)',
      about: 'Run in the Gaffer checkout: starts your command once per task or job run; its exit status is the outcome (0 done, 75 retry, 65 failed, 77 needs a human).',
      text: `GAFFER_TOKEN=${token} node scripts/gaffer.mjs agent --url ${url} --role ${role} -- your-cli`,
    },
    {
      id: 'python',
      title: 'Python',
      about: 'Install the package from the Gaffer checkout, then run your agent with these variables (it reads them from os.environ).',
      text: `pip install ./sdk/python\nGAFFER_URL=${url} GAFFER_TOKEN=${token} GAFFER_ROLE=${role} python3 your_agent.py`,
    },
  ];
}

/** The Python agent the third command runs, reading what the command sets. */
export const PYTHON_AGENT_EXAMPLE = `import asyncio, os
import gaffer_agent

async def main():
    async with gaffer_agent.connect(os.environ["GAFFER_URL"], token=os.environ["GAFFER_TOKEN"],
                                    role=os.environ["GAFFER_ROLE"], name="py-1") as agent:
        async def handle(task):
            return {"ok": True}  # reported done; the dict becomes the task's output
        await agent.work(handle)

asyncio.run(main())`;
