/**
 * One attempt: COMMAND started once for a task or a run, watched until its process group is gone.
 *
 * Invariants:
 * 1. The payload (the whole task or trigger) is written to GAFFER_PAYLOAD_FILE (mode 0600) and to
 *    the child's stdin; GAFFER_OUTPUT_FILE is read after the group is gone. Both files are removed
 *    when the attempt ends, however it ends.
 * 2. Every stdout/stderr line goes to the log sink, within the output budget; `::gaffer::` lines
 *    (either stream) are control messages, never log lines, and are handled even after the log
 *    budget is spent. With an adapter, stdout lines it recognises become its readable lines.
 * 3. Steps are recorded in the order printed, one at a time; the attempt's end waits for the last
 *    one, so a run's result is never sent before its checkpoints. A step that cannot be recorded
 *    stops the child (taken away if the server says the work is no longer ours).
 * 4. Taking the work away (`signal`), the `--timeout-s` limit and `interrupt('shutdown')` end the
 *    child's whole process group: SIGTERM, SIGKILL after `killAfterMs`. The first of them decides
 *    the ending; a later one changes nothing.
 */
import fs from 'node:fs';
import path from 'node:path';
import { exceedsUtf8Bytes, jsonDeeperThan, MAX_JSON_BYTES, MAX_JSON_DEPTH } from '../../common/schemas';
import { findIllFormedText, wellFormedDeep } from '../../common/text';
import type { AdapterDefinition, AdapterSink } from './adapters';
import { describeProgress, isControlLine, parseControlLine } from './control-lines';
import { childEnvironment } from './environment';
import { cutText, LineSplitter, OutputBudget, type OutputLimits } from './lines';
import type { LogLevel, LogSink, LogStream, WorkRef } from './log-sink';
import type { Ending } from './outcome';
import { GroupChild } from './process-group';
import { UsageMeter, type UsageIncrement, type UsageTotals } from './usage';

export interface CommandSpec {
  command: string;
  args: readonly string[];
  shell: boolean;
  cwd?: string;
  /** Per-attempt time limit (seconds). */
  timeoutS?: number;
  /** SIGTERM → SIGKILL delay (PROTOCOL §6: 10 s). */
  killAfterMs: number;
  limits: OutputLimits;
  adapter?: AdapterDefinition;
}

export interface AttemptContext {
  spec: CommandSpec;
  sink: LogSink;
  /** The environment the child inherits (secrets are removed from it). */
  baseEnv: NodeJS.ProcessEnv;
  /** More secrets to keep out of the child's environment (the agent token). */
  secrets: readonly string[];
  /** A private directory for payload and output files. */
  workDir: string;
}

export interface AttemptInput {
  ref: WorkRef;
  /** The GAFFER_* variables of this attempt, without the two file paths. */
  vars: Record<string, string>;
  payload: unknown;
  /** Aborted when the work is taken away; its reason is reported in the log. */
  signal: AbortSignal;
  /** Records a checkpoint; rejecting stops the attempt (invariant 3). */
  onStep?: (step: { name: string; ref?: string }) => Promise<unknown>;
  /**
   * Told each usage increment as the command reports it (a `::gaffer::` line or the adapter), so
   * Gaffer sums it while the command runs and a spend cap can stop the work at once.
   */
  onUsage?: (u: UsageIncrement) => void;
  /** Tells whether an error from `onStep` means the work was taken away. */
  isTakenAway?: (e: unknown) => boolean;
}

export interface AttemptResult {
  ending: Ending;
  /** From the output file, else the adapter's final answer. */
  output?: unknown;
  /** Things the operator should know (a malformed output file, truncated output). */
  problems: string[];
  usage: UsageTotals | null;
  /** The last stderr line, for the report note. */
  lastStderr?: string;
}

/** An output file larger than this is not even read (Gaffer keeps at most MAX_JSON_BYTES of JSON). */
const MAX_OUTPUT_FILE_BYTES = 4 * MAX_JSON_BYTES;

let fileSeq = 0;

function removeIfThere(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch {
    /* not there */
  }
}

function reasonText(signal: AbortSignal): string {
  const r: unknown = signal.reason;
  return r instanceof Error ? r.message : typeof r === 'string' ? r : 'the work was taken away';
}

export class Attempt {
  private child: GroupChild | undefined;
  private forced: Ending | undefined;
  private readonly budget: OutputBudget;
  private readonly usage = new UsageMeter();
  private readonly problems: string[] = [];
  private steps: Promise<void> = Promise.resolve();
  private lastStderr: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();

  constructor(
    private readonly ctx: AttemptContext,
    private readonly input: AttemptInput,
  ) {
    this.budget = new OutputBudget(ctx.spec.limits);
  }

  /** Ends the attempt early (invariant 4); the first call decides the ending. */
  interrupt(ending: Ending): void {
    if (this.forced) return;
    this.forced = ending;
    void this.child?.terminate(this.ctx.spec.killAfterMs);
  }

  get runningForMs(): number {
    return Date.now() - this.started;
  }

  async run(): Promise<AttemptResult> {
    const { spec } = this.ctx;
    const { signal } = this.input;
    if (signal.aborted) return { ending: { kind: 'taken_away', reason: reasonText(signal) }, problems: [], usage: null };
    const base = path.join(this.ctx.workDir, `${this.input.ref.kind}-${this.input.ref.id.replace(/[^\w.-]/g, '_')}-${this.input.ref.attempt}-${++fileSeq}`);
    const payloadFile = `${base}.payload.json`;
    const outputFile = `${base}.output.json`;
    const payloadText = JSON.stringify(this.input.payload ?? null);
    try {
      fs.writeFileSync(payloadFile, payloadText, { mode: 0o600 });
      const env = childEnvironment(this.ctx.baseEnv, { ...this.input.vars, GAFFER_PAYLOAD_FILE: payloadFile, GAFFER_OUTPUT_FILE: outputFile }, this.ctx.secrets);
      const child = new GroupChild({ command: spec.command, args: spec.args, shell: spec.shell, env, ...(spec.cwd ? { cwd: spec.cwd } : {}) });
      this.child = child;
      const onAbort = () => this.interrupt({ kind: 'taken_away', reason: reasonText(signal) });
      signal.addEventListener('abort', onAbort, { once: true });
      if (spec.timeoutS !== undefined) this.timer = setTimeout(() => this.interrupt({ kind: 'timeout', afterS: spec.timeoutS! }), spec.timeoutS * 1000);
      try {
        const streamsDone = this.wireOutput(child);
        child.child.stdin?.end(`${payloadText}\n`);
        const exit = await child.settled(spec.killAfterMs);
        if (this.forced === undefined && exit.spawnError) {
          const e = exit.spawnError;
          return { ending: { kind: 'spawn_failed', reason: `${e.code ?? 'error'}: ${e.message}` }, problems: [], usage: null };
        }
        // The group is gone, so the pipes are closing; a process that left the group on purpose
        // may still hold them: stop reading after a moment rather than wait for it.
        let stragglers: NodeJS.Timeout | undefined;
        await Promise.race([streamsDone, new Promise<void>((r) => (stragglers = setTimeout(r, 1000)))]);
        clearTimeout(stragglers);
        child.child.stdout?.destroy();
        child.child.stderr?.destroy();
        await streamsDone;
        await this.steps;
        const ending: Ending = this.forced ?? (exit.code !== null ? { kind: 'exited', code: exit.code } : { kind: 'signalled', signal: exit.signal ?? 'a signal' });
        const output = ending.kind === 'taken_away' ? undefined : this.readOutput(outputFile);
        return { ending, ...(output !== undefined ? { output } : {}), problems: this.problems, usage: this.usage.total, ...(this.lastStderr ? { lastStderr: this.lastStderr } : {}) };
      } finally {
        signal.removeEventListener('abort', onAbort);
        if (this.timer) clearTimeout(this.timer);
      }
    } finally {
      removeIfThere(payloadFile);
      // Known absent when it was looked for and not found (the usual case): no second syscall.
      if (this.outputSeen || !this.outputChecked) removeIfThere(outputFile);
    }
  }

  // ---- output ----

  /** Resolves when both streams have ended. */
  private wireOutput(child: GroupChild): Promise<void> {
    const adapter = this.ctx.spec.adapter?.create();
    const adapterSink: AdapterSink = {
      log: (text, level) => this.log('stdout', text, level),
      usage: (u) => this.addUsage(u),
    };
    const streams: Array<[NodeJS.ReadableStream | null, LogStream]> = [
      [child.child.stdout, 'stdout'],
      [child.child.stderr, 'stderr'],
    ];
    const ended = streams.map(([stream, name]) => {
      if (!stream) return Promise.resolve();
      const splitter = new LineSplitter((line) => {
        if (isControlLine(line)) this.control(line);
        else if (name === 'stdout' && adapter?.line(line, adapterSink)) return;
        else {
          if (name === 'stderr' && line.trim()) this.lastStderr = cutText(line, 500, '…');
          this.log(name, line);
        }
      });
      return new Promise<void>((resolve) => {
        stream.on('data', (chunk: Buffer) => splitter.push(chunk));
        stream.once('close', () => {
          splitter.end();
          if (name === 'stdout') adapter?.end?.(adapterSink);
          resolve();
        });
      });
    });
    return Promise.all(ended).then(() => {
      if (adapter) this.adapterOutput = adapter.result();
    });
  }

  private adapterOutput: Record<string, unknown> | undefined;

  private log(stream: LogStream, text: string, level?: LogLevel): void {
    const verdict = this.budget.admit(text);
    if (verdict.verdict === 'drop') return;
    if (verdict.verdict === 'notice') {
      this.ctx.sink(this.input.ref, { text: verdict.text, stream: 'agent', level: 'warn' });
      this.problems.push('output truncated (over the log limit)');
      return;
    }
    this.ctx.sink(this.input.ref, { text, stream, ...(level ? { level } : {}) });
  }

  private agentLine(text: string, level: LogLevel = 'info'): void {
    this.ctx.sink(this.input.ref, { text, stream: 'agent', level });
  }

  private addUsage(u: UsageIncrement): void {
    this.usage.add(u);
    this.input.onUsage?.(u);
  }

  private control(line: string): void {
    const parsed = parseControlLine(line);
    if (!parsed.ok) {
      this.agentLine(`ignored a malformed ::gaffer:: line (${parsed.reason}): ${cutText(line, 300, '…')}`, 'warn');
      return;
    }
    const m = parsed.message;
    if (m.log) this.log('stdout', m.log.text, m.log.level);
    if (m.progress) this.agentLine(describeProgress(m.progress));
    if (m.usage) this.addUsage(m.usage);
    if (m.step) this.step(m.step);
  }

  private step(step: { name: string; ref?: string }): void {
    const record = this.input.onStep;
    if (!record) {
      this.agentLine(`step "${step.name}" completed`);
      return;
    }
    this.steps = this.steps.then(async () => {
      if (this.forced) return;
      try {
        await record(step);
      } catch (e) {
        const reason = e instanceof Error ? e.message : String(e);
        this.agentLine(`step "${step.name}" could not be recorded: ${reason}`, 'error');
        this.interrupt(this.input.isTakenAway?.(e) ? { kind: 'taken_away', reason } : { kind: 'checkpoint_failed', reason });
      }
    });
  }

  private outputSeen = false;
  private outputChecked = false;

  private readOutput(file: string): unknown {
    let text: string;
    let fd: number;
    this.outputChecked = true;
    try {
      fd = fs.openSync(file, 'r'); // one syscall when (as usual) there is no output file
    } catch {
      return this.adapterOutput;
    }
    this.outputSeen = true;
    try {
      const size = fs.fstatSync(fd).size;
      if (size > MAX_OUTPUT_FILE_BYTES) {
        this.problems.push(`the output file is ${size} bytes; Gaffer keeps at most ${MAX_JSON_BYTES} bytes of JSON: not reported`);
        return undefined;
      }
      text = fs.readFileSync(fd, 'utf8');
    } catch {
      return this.adapterOutput;
    } finally {
      fs.closeSync(fd);
    }
    if (!text.trim()) return this.adapterOutput;
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch {
      this.problems.push('the output file is not valid JSON: not reported');
      return undefined;
    }
    if (findIllFormedText(value)) {
      // `"\ud83d"` in JSON is a lone surrogate: Gaffer stores only well-formed text.
      value = wellFormedDeep(value);
      this.problems.push('the output held broken characters (unpaired surrogates); they were replaced by U+FFFD');
    }
    if (jsonDeeperThan(value, MAX_JSON_DEPTH) || exceedsUtf8Bytes(JSON.stringify(value), MAX_JSON_BYTES)) {
      this.problems.push(`the output is larger than ${MAX_JSON_BYTES} bytes of JSON or nests deeper than ${MAX_JSON_DEPTH}: not reported`);
      return undefined;
    }
    return value;
  }
}
