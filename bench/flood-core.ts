/**
 * The in-process setup the ingest benches share (logs-gap, logs-turns, logs-fsync): a core whose
 * flood role may log and spend without limit, 4 tasks to flood into, a backlog for the probe, and
 * the agent socket on 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCore, type Core } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { seedBacklog } from './util';

/** Seeds `core` for a flood; returns a token for the probe (role dev) and one for the flood's agents. */
export function seedFlood(core: Core): { probe: string; flood: string } {
  seedBacklog(core.db, 60_000);
  core.logs.setSettings({ logBytesPerSecondPerToken: 1024 ** 3, logBurstBytesPerToken: 1024 ** 3 }, { actor: 'bench', reason: 'bench' });
  core.budgets.put({ perRoleDailyUsd: { flood: 1e6 }, windows: [{ scope: 'role', role: 'flood', hours: 5, maxTokens: 1e13 }], actor: 'bench' });
  core.store.write(() => {
    for (let i = 0; i < 4; i++) core.tasks.create({ title: `flood ${i}`, role: 'flood', budget: { maxCostUsdPerRun: 1e6 } }, { actor: 'bench' });
  });
  const token = (role: string) => core.tokens.create({ name: `bench-${role}`, role, actor: 'bench' }).token;
  return { probe: token('dev'), flood: token('flood') };
}

/** A started, seeded core in `dir` with the agent socket listening; `url` is its agent socket. */
export async function startFloodServer(dir: string): Promise<{ core: Core; server: http.Server; url: string; tokens: { probe: string; flood: string } }> {
  const core = createCore({ dataDir: dir, hub: { ratePerSecond: 1e9, rateBurst: 1e9 } });
  core.start();
  const tokens = seedFlood(core);
  const server = http.createServer((_q, s) => s.writeHead(404).end());
  attachAgentSocket(server, core, { maxConnections: 100 });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { core, server, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/agent`, tokens };
}
