/**
 * How the examples connect: GAFFER_URL, GAFFER_TOKEN, GAFFER_ROLE and GAFFER_NAME from the
 * environment. The token goes in the upgrade's Authorization header (the SDK never logs it).
 * `agentTokenFromEnvironment()` also takes it from the pipe Gaffer hands it over on when it runs
 * the example as a `long_running` managed agent (GAFFER_TOKEN_FD), and out of the environment.
 */
import { agentTokenFromEnvironment, connect, consoleLogger, type Agent } from 'gaffer-agent';

export async function connectFromEnv(defaultRole: string, namePrefix: string): Promise<Agent> {
  const token = agentTokenFromEnvironment();
  if (!token) {
    console.error('GAFFER_TOKEN is not set (create an agent token with POST /api/v1/tokens)');
    process.exit(2);
  }
  return connect({
    url: process.env.GAFFER_URL ?? 'ws://127.0.0.1:7311/agent',
    token,
    role: process.env.GAFFER_ROLE ?? defaultRole,
    name: process.env.GAFFER_NAME ?? `${namePrefix}-${process.pid}`,
    version: '1.0.0',
    logger: consoleLogger,
  });
}
