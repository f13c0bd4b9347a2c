/**
 * The commands that start an agent with a fresh token, written to work as printed: this server's
 * agent URL, the whole secret, the role. Three ways in: the worker example of this checkout, the
 * command agent (any program becomes an agent: `node scripts/gaffer.mjs agent … -- your-cli`; not
 * through npx, which would stay alive with the token in its environment) and the Python
 * package (`pip install ./sdk/python`).
 */

export interface AgentCommand {
  id: 'worker' | 'command' | 'python';
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

export function agentCommands(o: { url: string; token: string; role: string }): AgentCommand[] {
  const url = shellQuote(o.url);
  const token = shellQuote(o.token);
  const role = shellQuote(o.role);
  return [
    {
      id: 'worker',
      title: 'Worker example',
      about: 'Run in the Gaffer checkout: claims tasks of the role and works them (examples/worker-agent.ts).',
      text: `GAFFER_URL=${url} GAFFER_TOKEN=${token} GAFFER_ROLE=${role} npx tsx examples/worker-agent.ts`,
    },
    {
      id: 'command',
      title: 'Any program as an agent',
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
