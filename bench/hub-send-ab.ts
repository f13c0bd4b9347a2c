/**
 * The reply's send path alone, A/B in one process (issue 32, branch hub5): 50 `ws` server sockets on
 * 127.0.0.1 send a report+claimNext-sized reply (~1 KB) each, round after round, either through
 * `ws.send(text)` (a corked header + text writev) or as one `textFrame` buffer in one socket write.
 * The other ends are raw TCP sockets that only drain the bytes (the same for both sides), so the
 * difference in process CPU per reply is the send path's. Blocks of A and B alternate; medians.
 *   npx tsx bench/hub-send-ab.ts [blocks=10] [repliesPerBlock=20000]
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer } from 'ws';
import { textFrame } from '../src-main/server/agent-socket';

const BLOCKS = Number(process.argv[2] ?? 10);
const PER = Number(process.argv[3] ?? 20_000);
const SOCKETS = 50;
const reply = JSON.stringify({ id: 'r-123', ok: true, result: { task: { id: 1, title: 'bench task 1', payload: { n: 1 }, pad: 'x'.repeat(400) }, replayed: false, next: { task: { id: 2, title: 'bench task 2', pad: 'y'.repeat(400) } } } });

async function main() {
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const conns: WebSocket[] = [];
  server.on('upgrade', (req, socket, head) => wss.handleUpgrade(req, socket, head, (ws) => conns.push(ws)));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const sinks: net.Socket[] = [];
  for (let i = 0; i < SOCKETS; i++) {
    const s = net.connect(port, '127.0.0.1');
    await new Promise((r) => s.once('connect', r));
    s.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);
    s.on('data', () => {}); // drain
    sinks.push(s);
  }
  while (conns.length < SOCKETS) await new Promise((r) => setTimeout(r, 10));
  const raws = conns.map((ws) => (ws as unknown as { _socket: Duplex })._socket);
  const sides = {
    'ws.send': (i: number) => conns[i % SOCKETS]!.send(reply),
    textFrame: (i: number) => raws[i % SOCKETS]!.write(textFrame(reply)),
  };
  const us: Record<string, number[]> = { 'ws.send': [], textFrame: [] };
  for (let b = 0; b < BLOCKS * 2; b++) {
    const name = b % 2 === 0 ? 'ws.send' : 'textFrame';
    const send = sides[name];
    const c0 = process.cpuUsage();
    // One burst per socket at a time, as a group commit's replies go out, then let the loop drain.
    for (let i = 0; i < PER; i += SOCKETS) {
      for (let j = 0; j < SOCKETS; j++) send(i + j);
      await new Promise((r) => setImmediate(r));
    }
    const c = process.cpuUsage(c0);
    us[name]!.push((c.user + c.system) / PER);
  }
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
  for (const [name, a] of Object.entries(us)) console.log(`${name.padEnd(10)} median ${median(a).toFixed(2)} µs CPU per reply (blocks ${a.map((x) => x.toFixed(1)).join(' ')})`);
  console.log(`textFrame / ws.send = ${(median(us.textFrame!) / median(us['ws.send']!)).toFixed(2)}; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`);
  for (const s of sinks) s.destroy();
  for (const ws of conns) ws.terminate();
  server.close();
}

void main();
