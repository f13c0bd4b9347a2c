/**
 * Headless Gaffer: the scheduler core and the local server, serving the console to a browser on
 * 127.0.0.1. `npm start` lands here when Electron cannot start.
 */
import { randomBytes } from 'node:crypto';
import { consoleLogger } from '../common/logger';
import { createCore } from '../core/create-core';
import { startManagedAgents } from '../server/managed';
import { startServer } from '../server/server';
import { parseCli } from '../server/cli';
import { consoleExtensions } from './console-extensions';

async function main(): Promise<void> {
  let opts;
  try {
    opts = parseCli(process.argv.slice(2));
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  const operatorToken = opts.operatorToken ?? `gfo_${randomBytes(32).toString('base64url')}`;
  let core;
  try {
    core = createCore({ dataDir: opts.dataDir, config: opts.config, logger: consoleLogger });
  } catch (e) {
    console.error(`gaffer: ${(e as Error).message}`);
    process.exit(1);
  }
  try {
    core.start();
  } catch (e) {
    // e.g. the disk is full and the restart bookkeeping cannot be written: one clear line, not a stack.
    console.error(`gaffer: cannot start: ${(e as Error).message}`);
    core.close();
    process.exit(1);
  }
  let server;
  try {
    server = await startServer(core, { host: opts.host, port: opts.port, operatorToken, extensions: consoleExtensions(core, { operatorToken, dataDir: opts.dataDir }) });
  } catch (e) {
    core.close();
    const err = e as NodeJS.ErrnoException;
    console.error(err.code === 'EADDRINUSE' ? `gaffer: port ${opts.port} is in use; pick another with --port` : `gaffer: ${err.message}`);
    process.exit(1);
  }
  // Managed agents need the agent URL, so they start once the server listens; a failure here leaves
  // Gaffer itself running (the console shows the agents as not supervised).
  let managed: { stop(): Promise<void> } | undefined;
  try {
    managed = await startManagedAgents(core, server);
  } catch (e) {
    console.error(`gaffer: managed agents not started: ${(e as Error).message}`);
  }
  const consoleUrl = `${server.url}/#token=${opts.operatorToken ? '' : operatorToken}`;
  console.log(`gaffer: data in ${opts.dataDir}`);
  console.log(`gaffer: agents connect to ${server.agentUrl}`);
  console.log(`gaffer: console at ${opts.operatorToken ? `${server.url}/ (operator token from GAFFER_OPERATOR_TOKEN)` : consoleUrl}`);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(`gaffer: ${signal}, shutting down`);
    // Agents first, while the server still takes the tasks they hand back.
    await managed?.stop();
    await server.close();
    core.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

void main();
