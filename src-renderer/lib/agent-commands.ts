/**
 * The commands that start an agent with a fresh token, written to work as printed: this server's
 * agent URL, the whole secret, the role. Three ways in: the worker example of this checkout, the
 * command agent (any program becomes an agent: `node scripts/gaffer.mjs agent … -- your-cli`; not
 * through npx, which would stay alive with the token in its environment) and the Python
 * package (`pip install ./sdk/python`).
 */

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

export function agentCommands(o: { url: string; token: string; role: string }): AgentCommand[] {
  const url = shellQuote(o.url);
  const token = shellQuote(o.token);
  const role = shellQuote(o.role);
  // The instance is named after the role (and the CLI), not after the command line.
  const cli = (name: string, parse: string, recipe: string) =>
    `GAFFER_TOKEN=${token} node scripts/gaffer.mjs agent --url ${url} --role ${role} --name ${shellQuote(`${o.role}-${name}`)} --parse ${parse} --timeout-s 1800 --shell -- ${shellQuote(recipe)}`;
  return [
    {
      id: 'claude',
      title: 'Connect Claude Code',
      about: 'Run in the Gaffer checkout: Claude Code works each task, its conversation, tokens and cost read from its stream; answering a question it asked continues the same conversation.',
      text: cli('claude', 'claude-stream-json', CLAUDE_RECIPE),
    },
    {
      id: 'codex',
      title: 'Connect Codex',
      about: 'Run in the Gaffer checkout: the Codex CLI works each task (codex exec --json), resumed with your answer when it asked one.',
      text: cli('codex', 'codex-json', CODEX_RECIPE),
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
