/**
 * The log store's operations as messages: one table of what the store can be asked, used by the
 * worker thread (worker.ts) and by the in-thread engine that tests and tools use.
 */
import type { LogAttempt, LogPage, LogSettings, LogStorageStats } from '../../common/logs';
import type { AppendEntry, AppendOutcome, LogStore, ReadQuery, SearchHit } from './log-store';

export interface EngineOps {
  append: { args: { entries: AppendEntry[]; now: number; settings: LogSettings }; result: AppendOutcome[] };
  read: { args: ReadQuery; result: LogPage };
  attempts: { args: { subject: string }; result: LogAttempt[] };
  search: { args: { q: string; limit: number }; result: SearchHit[] };
  sweep: { args: { now: number; settings: Pick<LogSettings, 'retentionDays' | 'maxTotalMb'> }; result: { removed: number } };
  stats: { args: Record<string, never>; result: LogStorageStats };
}
export type EngineOp = keyof EngineOps;

/** Lines indexed for word search before a search runs (the rest waits for idle time). */
const INDEX_BEFORE_SEARCH = 50_000;

export function runOp<O extends EngineOp>(store: LogStore, op: O, args: EngineOps[O]['args']): EngineOps[O]['result'] {
  const a = args as never;
  const table: { [K in EngineOp]: (x: EngineOps[K]['args']) => EngineOps[K]['result'] } = {
    append: (x) => store.append(x.entries, x.now, x.settings),
    read: (x) => store.read(x),
    attempts: (x) => store.attemptsOf(x.subject),
    search: (x) => {
      store.indexSome(INDEX_BEFORE_SEARCH);
      return store.search(x.q, x.limit);
    },
    sweep: (x) => store.sweep(x.now, x.settings),
    stats: () => store.stats(),
  };
  return (table[op] as (x: never) => EngineOps[O]['result'])(a);
}

/** Where the log store runs: a worker thread in Gaffer, this thread in tests. */
export interface LogEngine {
  call<O extends EngineOp>(op: O, args: EngineOps[O]['args']): Promise<EngineOps[O]['result']>;
  close(): Promise<void>;
}

/** The store on this thread (tests, tools): each call runs in a later microtask, like a worker's reply. */
export function inlineEngine(store: LogStore): LogEngine {
  let closed = false;
  return {
    call: (op, args) =>
      Promise.resolve().then(() => {
        if (closed) throw new Error('log engine closed');
        return runOp(store, op, args);
      }),
    async close() {
      if (closed) return;
      closed = true;
      store.close();
    },
  };
}
