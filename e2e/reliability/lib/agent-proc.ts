/**
 * An SDK agent in its own OS process, so a test can SIGSTOP, SIGCONT or SIGKILL it.
 * Usage: node --import tsx agent-proc.ts   (env: GAFFER_URL, GAFFER_TOKEN, ROLE, NAME, RECONNECT)
 *
 * Reads one JSON command per stdin line and prints one JSON event per stdout line:
 *   {"cmd":"claim"}                                  → {"ev":"claimed","taskId","fence","attempt"} | {"ev":"empty"}
 *   {"cmd":"report","taskId","fence","status","afterMs"?}
 *                                                    → {"ev":"reported",…} | {"ev":"refused","code","status",…}
 *   {"cmd":"work","holdMs"}   one SDK work() task: the handler takes holdMs; SDK events are printed
 *                             ({"ev":"task.claimed"|"task.renewed"|"task.lost"|"task.reported"})
 *   {"cmd":"exit"}
 * Prints {"ev":"ready","instanceId"} once connected. Does not reconnect unless RECONNECT=1 (then the
 * SDK reconnects with a 50–300 ms backoff); otherwise a test decides what happens.
 */
import readline from 'node:readline';
import { connect, GafferRequestError } from '../../../src-main/sdk';

const out = (o: Record<string, unknown>) => process.stdout.write(`${JSON.stringify({ t: Date.now(), ...o })}\n`);

const agent = await connect({
  url: process.env.GAFFER_URL!,
  token: process.env.GAFFER_TOKEN!,
  role: process.env.ROLE ?? 'dev',
  name: process.env.NAME ?? 'proc-agent',
  reconnect: process.env.RECONNECT === '1' ? { initialDelayMs: 50, maxDelayMs: 300 } : false,
  logger: {
    info: () => {},
    warn: (m, f) => out({ ev: 'log', level: 'warn', msg: m, ...(f ?? {}) }),
    error: (m, f) => out({ ev: 'log', level: 'error', msg: m, ...(f ?? {}) }),
  },
});
for (const ev of ['task.claimed', 'task.renewed', 'task.lost', 'task.reported', 'disconnected', 'closed'] as const) {
  agent.on(ev, (e: object) => out({ ev, ...(ev === 'task.claimed' ? { taskId: (e as { task: { id: number } }).task.id, fence: (e as { fence: number }).fence } : e) }));
}
out({ ev: 'ready', instanceId: agent.instanceId });

const refused = (e: unknown) =>
  e instanceof GafferRequestError ? { ev: 'refused', code: e.code, status: e.status, message: e.message } : { ev: 'failed', message: String(e) };

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const c = JSON.parse(line) as { cmd: string; taskId?: number; fence?: number; status?: 'done' | 'failed' | 'blocked' | 'backlog'; afterMs?: number; holdMs?: number };
  void (async () => {
    switch (c.cmd) {
      case 'claim': {
        try {
          const r = await agent.claim();
          out(r ? { ev: 'claimed', taskId: r.task.id, fence: r.lock.fence, attempt: r.task.attempt } : { ev: 'empty' });
        } catch (e) {
          out(refused(e));
        }
        break;
      }
      case 'report': {
        if (c.afterMs) await new Promise((r) => setTimeout(r, c.afterMs));
        out({ ev: 'reporting', taskId: c.taskId, fence: c.fence });
        try {
          const r = await agent.report(c.taskId!, c.fence!, c.status ?? 'done', { output: { by: process.env.NAME } });
          out({ ev: 'reported', taskId: c.taskId, fence: c.fence, replayed: r.replayed ?? false });
        } catch (e) {
          out({ ...refused(e), taskId: c.taskId, fence: c.fence });
        }
        break;
      }
      case 'work': {
        await agent.work(
          async () => {
            out({ ev: 'working' });
            await new Promise((r) => setTimeout(r, c.holdMs ?? 0));
            out({ ev: 'handler_done' });
            return { output: { by: process.env.NAME } };
          },
          { maxTasks: 1, idleDelayMs: 50 },
        );
        out({ ev: 'work_done' });
        break;
      }
      case 'exit':
        await agent.close({ timeoutMs: 500 });
        process.exit(0);
    }
  })();
});
