/**
 * The real clock's `afterIo` against a real socket: a decision deferred by a late timer runs after
 * the input that waited in the socket and after what that input queued to commit (group commit).
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../common/clock';

describe('systemClock.afterIo', () => {
  const closers: Array<() => void> = [];
  afterEach(() => {
    for (const c of closers.splice(0)) c();
  });

  it('runs after the input that waited while the loop was stalled, and after what that input queued to commit', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    closers.push(() => server.close());
    const accepted = new Promise<net.Socket>((r) => server.once('connection', r));
    const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
    closers.push(() => client.destroy());
    await new Promise<void>((r) => client.once('connect', () => r()));
    const peer = await accepted;
    closers.push(() => peer.destroy());
    const order: string[] = [];
    // What the hub does with a frame: hand it to the group commit, which flushes in an immediate.
    peer.on('data', () => {
      order.push('input');
      setImmediate(() => order.push('commit'));
    });
    const decided = new Promise<void>((resolve) => {
      setTimeout(() => {
        order.push('late timer');
        systemClock.afterIo(() => {
          order.push('decision');
          resolve();
        });
      }, 5);
    });
    client.write('heartbeat');
    // The loop is blocked past the timer's due time while the frame waits in the socket (a stall).
    const until = performance.now() + 50;
    while (performance.now() < until) {
      /* stalled */
    }
    await decided;
    expect(order).toEqual(['late timer', 'input', 'commit', 'decision']);
  });
});
