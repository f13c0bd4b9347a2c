/**
 * How much of a log flood the server's main thread takes in one turn of its event loop (bench/REPORT.md,
 * "ingest-isolation").  Run:  npx tsx bench/logs-turns.ts
 *
 * An in-process core with the agent socket, 4 SDK agents flooding (a usage frame every 10 lines) and a
 * paced probe for 5 s. The log frames the hub takes are counted per macrotask (a turn ends at each
 * setImmediate tick): a claim read in that turn waits for all of them. Counts and bytes, not times,
 * so the figure holds on a loaded machine (each 224 KiB frame costs the thread ~1.3 ms of CPU here).
 */
import fs from 'node:fs';
import path from 'node:path';
import { startFloodServer } from './flood-core';
import { benchDir, spawnChild, stopChild } from './util';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = benchDir('turns');
const { core, server, url, tokens: { probe: probeTok, flood: floodTok } } = await startFloodServer(dir);
// Count log frames (and their bytes) the hub takes per macrotask: a turn ends at each setImmediate tick.
let frames = 0, chars = 0;
const perTurn: number[] = [], charsPerTurn: number[] = [];
const logs = core.logs as unknown as { logText: (i: string, t: string) => unknown };
const orig = logs.logText.bind(core.logs);
logs.logText = (i, t) => { frames++; chars += t.length; return orig(i, t); };
let on = false;
const tick = () => { if (on && frames > 0) { perTurn.push(frames); charsPerTurn.push(chars); } frames = 0; chars = 0; setImmediate(tick); };
setImmediate(tick);
const HERE = path.dirname(new URL(import.meta.url).pathname);
const probe = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
const flood = (await spawnChild(path.join(HERE, 'logs-agents.ts'))).child;
flood.send({ cmd: 'flood', url, token: floodTok, agents: 4, lineChars: 80, usageEvery: 10 });
await flood.next();
await sleep(800);
on = true;
probe.send({ cmd: 'latency', url, token: probeTok, durationMs: 5000, role: 'dev', paceMs: 12 });
const m = await probe.next();
on = false;
perTurn.sort((a, b) => a - b); charsPerTurn.sort((a, b) => a - b);
const q = (a: number[], x: number) => a[Math.min(a.length - 1, Math.floor(x * a.length))];
const sum = perTurn.reduce((a, b) => a + b, 0);
console.log(`log frames taken in one macrotask: turns with any ${perTurn.length}, frames ${sum}; p50 ${q(perTurn, 0.5)} p90 ${q(perTurn, 0.9)} p99 ${q(perTurn, 0.99)} max ${perTurn.at(-1)}; KiB per such turn p50 ${(q(charsPerTurn, 0.5)! / 1024).toFixed(0)} p99 ${(q(charsPerTurn, 0.99)! / 1024).toFixed(0)} max ${(charsPerTurn.at(-1)! / 1024).toFixed(0)}; probe p50 ${m.p50Ms.toFixed(2)} p99 ${m.p99Ms.toFixed(2)} ms`);
flood.send({ cmd: 'stop' }); await flood.next();
await stopChild(flood); await stopChild(probe);
server.closeAllConnections(); server.close(); core.close(); await core.logs.close();
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
