/**
 * Headless Gaffer: the scheduler core and the local server, serving the console to a browser on
 * 127.0.0.1. `npm start` lands here when Electron cannot start.
 *
 * Before anything else: the operator token leaves the process's environment (PROTOCOL §17; under
 * `npm start`, scripts/start.mjs did it already and this finds it taken), and the umask becomes
 * 077 so every file of the data directory is private to this user.
 */
import { randomBytes } from 'node:crypto';
import { secretWarnings, takeProcessSecrets } from '../../scripts/lib/process-secrets.mjs';
import { tightenUmask } from '../../scripts/lib/umask.mjs';
import { consoleLogger } from '../common/logger';
import { createCore } from '../core/create-core';
import { startManagedAgents } from '../server/managed';
import { startServer } from '../server/server';
import { parseCli } from '../server/cli';
import { tuneServerHeap } from '../server/v8-heap';
import { consoleExtensions } from './console-extensions';

const secrets = takeProcessSecrets();
const userUmask = tightenUmask();
tuneServerHeap();

async function main(): Promise<void> {
  let opts;
  try {
    opts = parseCli(process.argv.slice(2), { ...process.env, ...secrets.tokens });
  } catch (e) {
    console.error((e as Error).message);
    process.exit(2);
  }
  for (const w of secretWarnings(secrets)) console.error(`gaffer: warning: ${w}`);
  const operatorToken = opts.operatorToken ?? `gfo_${randomBytes(32).toString('base64url')}`;
  let core;
  try {
    // Notifications link to the console at the address it is served on (a setting may override it).
    const consoleUrl = opts.port > 0 ? { webhooks: { consoleUrl: `http://${opts.host}:${opts.port}/` } } : {};
    core = createCore({ dataDir: opts.dataDir, config: opts.config, logger: consoleLogger, ...consoleUrl });
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
    managed = await startManagedAgents(core, server, { userUmask });
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
