import { describe, expect, it } from 'vitest';
import { managedAgentInput } from '../../src-main/common/managed-agents';
import { agentCommands, agentUrl, CODEX_RECIPE, managedCliAgent, shellQuote } from './agent-commands';

describe('agent start commands', () => {
  it('name this server, the whole secret and the role', () => {
    const token = 'gft_0123456789abcdefghijklmnopqrstuvwxyz_ABCDEF';
    const cmds = agentCommands({ url: 'ws://127.0.0.1:40123/agent', token, role: 'dev' });
    expect(cmds.map((c) => c.id)).toEqual(['claude', 'codex', 'worker', 'command', 'python']);
    cmds.splice(0, 2);
    expect(cmds[0]!.text).toBe(`GAFFER_URL=ws://127.0.0.1:40123/agent GAFFER_TOKEN=${token} GAFFER_ROLE=dev npx tsx examples/worker-agent.ts`);
    expect(cmds[1]!.text).toBe(`GAFFER_TOKEN=${token} node scripts/gaffer.mjs agent --url ws://127.0.0.1:40123/agent --role dev -- your-cli`);
    expect(cmds[2]!.text.split('\n')).toEqual(['pip install ./sdk/python', `GAFFER_URL=ws://127.0.0.1:40123/agent GAFFER_TOKEN=${token} GAFFER_ROLE=dev python3 your_agent.py`]);
  });

  it('Claude Code and Codex: the right --parse, the instance named after the role, the prompt on stdin (not on the command line), resume on an answer', () => {
    const [claude, codex] = agentCommands({ url: 'ws://127.0.0.1:40123/agent', token: 'gft_x', role: 'dev' });
    expect(claude!.text).toMatch(/^GAFFER_TOKEN=gft_x node scripts\/gaffer\.mjs agent --url ws:\/\/127\.0\.0\.1:40123\/agent --role dev --name dev-claude --parse claude-stream-json .* --shell -- '/);
    expect(codex!.text).toContain('--name dev-codex --parse codex-json');
    for (const c of [claude!, codex!]) {
      expect(c.text).toContain('cat; } |'); // the payload (stdin) follows the prompt into the CLI's stdin
      expect(c.text).not.toContain('$(cat'); // never spliced into an argument
      expect(c.text).toContain('"$GAFFER_RESUME_SESSION"');
    }
  });

  it('a managed CLI agent is the printed command kept by Gaffer: same recipe, --parse and time limit; a valid name after the role', () => {
    const codex = managedCliAgent('codex', 'dev');
    expect(codex).toMatchObject({ name: 'dev-codex', role: 'dev', command: [CODEX_RECIPE], shell: true, parse: 'codex-json', timeoutS: 1800 });
    expect(codex).not.toHaveProperty('cwd');
    const long = managedCliAgent('claude', 'r'.repeat(64));
    expect(long.name).toHaveLength(64);
    expect(managedAgentInput.safeParse(long).success).toBe(true);
  });

  it('take the URL from the page, or the reported port in the desktop app', () => {
    expect(agentUrl(7311, { protocol: 'http:', host: '127.0.0.1:40123' })).toBe('ws://127.0.0.1:40123/agent');
    expect(agentUrl(7311, { protocol: 'https:', host: 'gaffer.local' })).toBe('wss://gaffer.local/agent');
    expect(agentUrl(40124, { protocol: 'app:', host: 'gaffer' })).toBe('ws://127.0.0.1:40124/agent');
    expect(agentUrl(null, null)).toBe('ws://127.0.0.1:7311/agent');
  });

  it('quote what a shell would split', () => {
    expect(shellQuote('gft_abc-123')).toBe('gft_abc-123');
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(shellQuote('a b')).toBe(`'a b'`);
  });
});
