/**
 * A Gaffer core + agent socket in a process of its own (forked by bench/hub.ts), so its memory can
 * be measured without the rest of the benchmark's garbage. Reports over IPC:
 *   start → {port, token, rssMb}      {cmd:'measure'} → {rssMb, heapMb, connections}
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createCore } from '../src-main/core/create-core';
import { attachAgentSocket } from '../src-main/server/agent-socket';
import { tuneServerHeap } from '../src-main/server/v8-heap';
import { benchTokens } from './util';

// Started as the real server is: headless main and Electron main tune the heap first thing.
tuneServerHeap();

const mb = (n: number) => Math.round((n / 1024 / 1024) * 10) / 10;
const gc = (globalThis as { gc?: () => void }).gc;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gaffer-bench-rss-'));
const core = createCore({ dataDir: dir });
core.start();
const server = http.createServer((_q, s) => s.writeHead(404).end());
const sock = attachAgentSocket(server, core, { maxConnections: 2000 });
server.listen(0, '127.0.0.1', () => {
  const token = benchTokens(core);
  gc?.();
  process.send!({ port: (server.address() as AddressInfo).port, token, rssMb: mb(process.memoryUsage().rss) });
});

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'measure') {
    gc?.();
    const u = process.memoryUsage();
    process.send!({ rssMb: mb(u.rss), heapMb: mb(u.heapUsed), connections: sock.connections });
  } else if (m.cmd === 'exit') {
    core.close();
    server.closeAllConnections();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  }
});
