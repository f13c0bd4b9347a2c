/**
 * An agent that never sends `heartbeat` and relies on answering pings (what most WebSocket
 * libraries do by themselves) stays online as long as the timings satisfy the start-up rule
 * (heartbeat timeout > 2 × heartbeat interval, server/cli.ts).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HubFixture } from '../tests/hub.testkit';

let h: HubFixture | undefined;
afterEach(() => {
  h?.close();
  h = undefined;
});

/** Runs 60 s of core time in 1 s steps; the agent answers every ping at once; the watchdog sweeps each second. */
async function pongOnly(config: { heartbeatTimeoutS: number; heartbeatIntervalMs: number }): Promise<string> {
  h = new HubFixture({ pingIntervalMs: config.heartbeatIntervalMs }, config);
  const { sock, id } = await h.agent();
  let answered = 0;
  for (let s = 0; s < 60; s++) {
    h.clock.advance(1000);
    while (answered < sock.pings) {
      answered++;
      sock.conn.alive();
    }
    await new Promise((r) => setImmediate(r));
    h.core.watchdog.sweep();
  }
  return h.core.instances.get(id).status;
}

describe('pongs keep an agent alive', () => {
  it('with the interval the start-up rule derives from a 10 s timeout, a pong-only agent stays online', async () => {
    expect(await pongOnly({ heartbeatTimeoutS: 10, heartbeatIntervalMs: 3333 })).toBe('online');
  });

  it('with the default 20 s interval under a 10 s timeout (refused at start now) it went offline', async () => {
    expect(await pongOnly({ heartbeatTimeoutS: 10, heartbeatIntervalMs: 20_000 })).toBe('offline');
  });
});
