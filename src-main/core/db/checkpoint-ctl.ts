/** What the main thread and the checkpoint thread share (checkpointer.ts, checkpoint-worker.ts). */

/** Slots of the control array (an Int32Array over a SharedArrayBuffer). */
export const Ctl = {
  /** Outermost commits on the main connection so far (wraps; only compared for equality). */
  Commits: 0,
  /** Set to 1 by the main thread: close the connection and end. */
  Stop: 1,
  /** The checkpoint thread's state (State). */
  State: 2,
} as const;
export const CTL_SLOTS = 3;

export const State = {
  /** Not yet running: the main thread may still cancel it (it then never opens the database). */
  Starting: 0,
  /** Its connection is (being) opened: the main thread waits for Closed before closing its own. */
  Open: 1,
  Closed: 2,
  /** Cancelled before it ran. */
  Cancelled: 3,
} as const;

export interface CheckpointWorkerData {
  dbPath: string;
  /** Where better-sqlite3 is (the thread's code is a script run with eval: checkpoint-worker.ts). */
  sqlitePath: string;
  nativeBinding?: string;
  ctl: SharedArrayBuffer;
  /** How often it looks at the commit count (ms). */
  tickMs: number;
  /** Checkpoint once no commit came for this long (ms)… */
  idleMs: number;
  /** … or once the oldest commit not yet copied has waited this long (ms). */
  maxDelayMs: number;
  /** Post `{done}` after each checkpoint that copied frames (tests). */
  report: boolean;
  nice?: number;
}
