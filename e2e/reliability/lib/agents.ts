/**
 * Load agents built on the real SDK (src-main/sdk): they create tasks with idempotency keys, claim,
 * work and report, and write every acknowledgement into a shared Ledger, so a scenario can prove
 * that nothing a client was told is committed ever disappears.
 */
import { BacklogError, ConnectionLostError, GafferRequestError, connect, type Agent } from '../../../src-main/sdk';
import type { Logger } from '../../../src-main/common/logger';
import type { Ledger } from './invariants';
import { request } from './http';
import { sleep, type Rng } from './mode';

export interface LoadAgentOptions {
  url: string;
  token: string;
  role: string;
  name: string;
  ledger: Ledger;
  rng: Rng;
  /** Problems seen on the client side (e.g. a key acknowledged with two different task ids). */
  problems: string[];
  /** Every n-th first attempt is given back (`backlog`) so tasks are re-claimed; 0 = never. */
  backlogEvery?: number;
  /** Reconnect backoff for the SDK. */
  reconnect?: { initialDelayMs: number; maxDelayMs: number };
  requestTimeoutMs?: number;
  logger?: Logger;
}

export interface AgentStats {
  created: number;
  replayed: number;
  claims: number;
  reports: number;
  retries: number;
  resumed: number;
  fresh: number;
  lost: number;
}

/** Errors after which repeating the same keyed create (or report) is the right move. */
export function retryable(e: unknown): boolean {
  if (e instanceof ConnectionLostError) return true;
  if (e instanceof GafferRequestError) return e.code === 'unavailable' || e.code === 'rate_limited' || e.status >= 500;
  const code = (e as { code?: unknown } | null)?.code;
  return code === 'timeout' || code === 'disconnected';
}

/** Records a create acknowledgement; a key acknowledged twice must name the same task. */
export function recordCreate(ledger: Ledger, problems: string[], key: string, title: string, taskId: number): void {
  const prev = ledger.creates.get(key);
  if (prev && prev.taskId !== taskId) problems.push(`key ${key} acknowledged as task ${prev.taskId} and then as task ${taskId}`);
  ledger.creates.set(key, { taskId, title });
}

export class LoadAgent {
  readonly stats: AgentStats = { created: 0, replayed: 0, claims: 0, reports: 0, retries: 0, resumed: 0, fresh: 0, lost: 0 };
  private readonly stop = new AbortController();
  private creating: Promise<void> | undefined;
  private readonly working: Array<Promise<void>> = [];
  private seq = 0;

  private constructor(
    readonly agent: Agent,
    private readonly o: LoadAgentOptions,
  ) {
    const { ledger } = o;
    // Ledger hooks: wrap the SDK's own claim/report so the work loop's calls are recorded too.
    const claim = agent.claim.bind(agent);
    agent.claim = async (role?: string) => {
      const c = await claim(role);
      if (c) {
        this.stats.claims++;
        ledger.claims.push({ taskId: c.task.id, fence: c.lock.fence, instanceId: agent.instanceId });
      }
      return c;
    };
    const report = agent.report.bind(agent);
    agent.report = async (taskId, fence, status, extra) => {
      const r = await report(taskId, fence, status, extra);
      this.stats.reports++;
      ledger.reports.push({ taskId, fence, status, instanceId: agent.instanceId });
      return r;
    };
    agent.on('ready', (e) => {
      if (e.first) return;
      if (e.resumed) this.stats.resumed++;
      else this.stats.fresh++;
    });
    agent.on('task.lost', () => this.stats.lost++);
  }

  static async start(o: LoadAgentOptions): Promise<LoadAgent> {
    const agent = await connect({
      url: o.url,
      token: o.token,
      role: o.role,
      name: o.name,
      reconnect: o.reconnect ?? { initialDelayMs: 50, maxDelayMs: 400 },
      requestTimeoutMs: o.requestTimeoutMs ?? 20_000,
      ...(o.logger ? { logger: o.logger } : {}),
    });
    return new LoadAgent(agent, o);
  }

  get instanceId(): string {
    return this.agent.instanceId;
  }

  /** Creates one task with `key`, repeating the identical request until it is acknowledged. */
  async createKeyed(key: string, title: string, deadlineMs = 60_000): Promise<{ taskId: number; replayed: boolean } | undefined> {
    const end = Date.now() + deadlineMs;
    for (let attempt = 1; Date.now() < end; attempt++) {
      try {
        const r = await this.agent.createTask({ title, idempotencyKey: key, payload: { key, by: this.o.name } });
        if (r.replayed) this.stats.replayed++;
        else this.stats.created++;
        recordCreate(this.o.ledger, this.o.problems, key, title, r.task.id);
        return { taskId: r.task.id, replayed: r.replayed };
      } catch (e) {
        if (!retryable(e)) {
          if ((e as { code?: string }).code === 'closed') return undefined;
          this.o.problems.push(`create ${key} refused: ${(e as Error).message}`);
          return undefined;
        }
        this.stats.retries++;
        await sleep(Math.min(200, 10 * attempt));
      }
    }
    this.o.problems.push(`create ${key} was never acknowledged within ${deadlineMs} ms`);
    return undefined;
  }

  /** Creates tasks until `stopCreating()`, one every `everyMs` (± jitter). */
  startCreating(everyMs: number): void {
    const rng = this.o.rng.fork(1);
    this.creating = (async () => {
      while (!this.stop.signal.aborted) {
        const n = ++this.seq;
        const key = `${this.o.name}-k${n}`;
        await this.createKeyed(key, `${this.o.name} task ${n}`);
        await sleep(rng.int(Math.floor(everyMs / 2), everyMs * 2));
      }
    })();
  }

  async stopCreating(): Promise<void> {
    this.stop.abort();
    await this.creating;
  }

  /** Starts `loops` SDK work loops (claim → work → report). */
  startWorking(loops: number, workMs: [number, number] = [0, 15]): void {
    const rng = this.o.rng.fork(2);
    const every = this.o.backlogEvery ?? 0;
    let handled = 0;
    for (let i = 0; i < loops; i++) {
      this.working.push(
        this.agent.work(
          async ({ task, attempt, signal }) => {
            await sleep(rng.int(workMs[0], workMs[1]));
            if (signal.aborted) throw new BacklogError('lock lost while working');
            if (every > 0 && attempt === 1 && ++handled % every === 0) throw new BacklogError('giving it back once');
            return { output: { by: this.o.name, task: task.id } };
          },
          { idleDelayMs: 40 },
        ),
      );
    }
  }

  async close(): Promise<void> {
    this.stop.abort();
    await this.creating;
    await this.agent.close({ timeoutMs: 2000 });
    await Promise.allSettled(this.working);
  }
}

/**
 * Creates tasks over HTTP (`POST /api/v1/tasks` + `Idempotency-Key`), repeating the identical
 * request after a connection error or a 503 until it is acknowledged.
 */
export async function httpCreateKeyed(
  port: () => number,
  token: string,
  key: string,
  title: string,
  ledger: Ledger,
  problems: string[],
  deadlineMs = 60_000,
): Promise<{ taskId?: number; replayed?: boolean; retries: number }> {
  const end = Date.now() + deadlineMs;
  let retries = 0;
  while (Date.now() < end) {
    try {
      const r = await request(port(), {
        method: 'POST',
        path: '/api/v1/tasks',
        token,
        headers: { 'idempotency-key': key },
        body: { title, role: 'dev', payload: { key, by: 'http' } },
        timeoutMs: 5000,
      });
      if (r.status === 200 || r.status === 201) {
        recordCreate(ledger, problems, key, title, r.json.task.id as number);
        return { taskId: r.json.task.id as number, replayed: r.json.replayed === true, retries };
      }
      if (r.status !== 503) {
        problems.push(`HTTP create ${key} answered ${r.status}: ${r.text.slice(0, 200)}`);
        return { retries };
      }
    } catch {
      /* server down: retry */
    }
    retries++;
    await sleep(Math.min(200, 10 * retries));
  }
  problems.push(`HTTP create ${key} never acknowledged within ${deadlineMs} ms`);
  return { retries };
}
