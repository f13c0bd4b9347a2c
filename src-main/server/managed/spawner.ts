/**
 * The real process spawner for the supervisor (core/managed/ports.ts).
 *
 * Invariants:
 * 1. Each managed process is the leader of a process group of its own (`detached`), so stopping
 *    it signals the group, never a pid alone.
 * 2. Its stdin is the lifeline: a pipe Gaffer holds open and never writes to. The OS closes it
 *    when Gaffer exits in any way (kill -9 included); the command agent (`--exit-on-stdin-close`)
 *    and the shim stop their commands when it does. An urgent stop closes it on purpose.
 * 3. `stop` sends SIGTERM once and SIGKILL at the earliest deadline asked for; after the leader
 *    has exited, what is left of its group is ended the same way.
 * 4. Its output costs Gaffer a bounded amount per second however much it prints (output-rate.ts):
 *    a flood is dropped beyond what is kept, said in a line, and throttled beyond what is read.
 * 5. It runs at a lower CPU priority than Gaffer (`nice`, the setting `--agent-nice`, default 10),
 *    and so does all it starts (process-group.ts `lowerPriority`): on a machine with few cores a
 *    busy agent or its command (`yes`, a compiler) gives way to the thread that serves claims.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { secretPipes } from '../../../scripts/lib/process-secrets.mjs';
import { LineSplitter } from '../../common/line-splitter';
import { groupAlive, lowerPriority, readProcStat, signalGroup, terminateGroup } from '../../cli/agent/process-group';
import type { LaunchedProcess, LaunchRequest, ProcessExit, ProcessSpawner, RecordedProcess } from '../../core/managed';
import { launchSpec, type LaunchPaths } from './launch';
import { DEFAULT_OUTPUT_RATE, OutputRate, type OutputRateLimits } from './output-rate';
import { reapLeftovers, reapMarker } from './reaper';

export class NodeManagedProcess implements LaunchedProcess {
  readonly pid: number | undefined;
  readonly startTicks: string | null;
  private outputFns: Array<(stream: 'stdout' | 'stderr', text: string) => void> = [];
  private exitFns: Array<(e: ProcessExit) => void> = [];
  private exit: ProcessExit | undefined;
  private termSent = false;
  private killAt = Infinity;
  private killTimer: NodeJS.Timeout | undefined;

  /** Invariant 4: what is read of its output, both streams together. */
  readonly outputRate: OutputRate;

  constructor(
    private readonly child: ChildProcess,
    capture: OutputCapture,
  ) {
    this.pid = child.pid;
    this.startTicks = child.pid !== undefined ? (readProcStat(child.pid)?.startTicks ?? null) : null;
    this.outputRate = new OutputRate(capture.now, capture.limits);
    child.stdin?.on('error', () => {});
    for (const [stream, name] of [
      [child.stdout, 'stdout'],
      [child.stderr, 'stderr'],
    ] as const) {
      if (stream) this.capture(stream, name);
    }
    child.once('error', (e: NodeJS.ErrnoException) => {
      if (child.pid === undefined) this.finish({ code: null, signal: null, error: `${e.code ?? 'error'}: ${e.message}` });
    });
    child.once('exit', (code, signal) => {
      const pid = child.pid;
      // Invariant 3: the leader is gone; end whatever is left of its group, then report.
      const rest = pid !== undefined && groupAlive(pid) ? terminateGroup(pid, 10_000) : Promise.resolve();
      void rest.then(() => this.finish({ code, signal }));
    });
  }

  private capture(stream: NodeJS.ReadableStream, name: 'stdout' | 'stderr'): void {
    const emit = (text: string) => {
      for (const f of this.outputFns) f(name, text);
    };
    const lines = new LineSplitter(emit, 2000);
    const notice = () => {
      const text = this.outputRate.takeDroppedNotice();
      if (text) emit(text);
    };
    let dropping = false;
    let paused = false;
    stream.on('data', (c: Buffer) => {
      const { keep, pauseMs } = this.outputRate.admit(c.length);
      if (keep > 0) {
        notice();
        dropping = false;
        lines.push(keep === c.length ? c : c.subarray(0, keep));
      }
      if (keep < c.length && !dropping) {
        dropping = true;
        lines.end(); // the line cut here ends here: what follows the gap is not glued to it
      }
      if (pauseMs > 0 && !paused) {
        paused = true;
        stream.pause();
        setTimeout(() => {
          paused = false;
          stream.resume();
        }, pauseMs).unref();
      }
    });
    stream.on('close', () => {
      lines.end();
      notice();
    });
  }

  private finish(e: ProcessExit): void {
    if (this.exit) return;
    this.exit = e;
    if (this.killTimer) clearTimeout(this.killTimer);
    for (const f of this.exitFns) f(e);
  }

  onOutput(fn: (stream: 'stdout' | 'stderr', text: string) => void): void {
    this.outputFns.push(fn);
  }

  onExit(fn: (e: ProcessExit) => void): void {
    if (this.exit) fn(this.exit);
    else this.exitFns.push(fn);
  }

  stop(killAfterMs: number, urgent = false): void {
    const pid = this.pid;
    if (pid === undefined || this.exit) return;
    if (urgent) this.child.stdin?.destroy();
    if (!this.termSent) {
      this.termSent = true;
      signalGroup(pid, 'SIGTERM');
    }
    const at = Date.now() + killAfterMs;
    if (at >= this.killAt) return;
    this.killAt = at;
    if (this.killTimer) clearTimeout(this.killTimer);
    this.killTimer = setTimeout(() => {
      if (!this.exit) signalGroup(pid, 'SIGKILL');
    }, killAfterMs);
  }
}

/** How output is captured (invariant 4); `now` is injected for the tests. */
export interface OutputCapture {
  now: () => number;
  limits: OutputRateLimits;
}

export class NodeProcessSpawner implements ProcessSpawner {
  private readonly capture: OutputCapture;

  constructor(
    private readonly paths: LaunchPaths,
    private readonly baseEnv: NodeJS.ProcessEnv = process.env,
    private readonly userUmask?: number,
    capture: Partial<OutputCapture> = {},
    /** Invariant 5: the nice value its processes run at (0: Gaffer's own). */
    private readonly nice = 0,
  ) {
    this.capture = { now: () => Date.now(), limits: DEFAULT_OUTPUT_RATE, ...capture };
  }

  launch(req: LaunchRequest): NodeManagedProcess {
    const spec = launchSpec(req, this.paths, this.baseEnv, this.userUmask);
    // The agent token goes over a pipe on fd 3 (launch.ts invariant 2).
    const pipes = secretPipes(spec.tokens, ['pipe', 'pipe', 'pipe'], spec.env);
    const child = spawn(spec.file, spec.args, { cwd: spec.cwd, env: pipes.env, stdio: pipes.stdio, detached: process.platform !== 'win32', windowsHide: true });
    if (child.pid !== undefined) lowerPriority(child.pid, this.nice); // invariant 5, before it starts anything
    void pipes.send(child);
    return new NodeManagedProcess(child, this.capture);
  }

  reapLeftovers(records: readonly RecordedProcess[], markerPrefix: string): Promise<number> {
    return reapLeftovers(records, markerPrefix);
  }

  reapMarker(marker: string): Promise<number> {
    return reapMarker(marker);
  }
}
