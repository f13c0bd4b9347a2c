/**
 * One attempt: COMMAND started once for a task or a run, watched until its process group is gone.
 *
 * Invariants:
 * 1. The payload (the whole task or trigger) is written to GAFFER_PAYLOAD_FILE (mode 0600) and to
 *    the child's stdin; GAFFER_OUTPUT_FILE is read after the group is gone. Both files are removed
 *    when the attempt ends, however it ends.
 * 2. Every stdout/stderr line goes to the attempt's log in Gaffer (log-sink.ts), within the
 *    agent's own budget when one is set; lines with this attempt's control prefix
 *    (`::gaffer:<GAFFER_CONTROL_TOKEN>::`, either stream) are control messages, never log lines,
 *    and are handled even after that budget is spent. Every other line is text, one that merely
 *    looks like a control line included (control-lines.ts). With an adapter, stdout lines it
 *    recognises become its readable lines.
 * 3. Steps are recorded in the order printed, one at a time; the attempt's end waits for the last
 *    one, so a run's result is never sent before its checkpoints. A step that cannot be recorded
 *    stops the child (taken away if the server says the work is no longer ours).
 * 4. Taking the work away (`signal`), the `--timeout-s` limit and `interrupt('shutdown')` end the
 *    child's whole process group: SIGTERM, SIGKILL after `killAfterMs`. The first of them decides
 *    the ending; a later one changes nothing. With the agent's lifeline, "the group" is the child's
 *    family (process-group.ts invariant 5): what it started with setsid is ended with it, when it
 *    is ended and when it exits, and the watchdog ends all of it if the agent dies first.
 * 5. Back-pressure: while the SDK holds more lines than it lets in (Gaffer is behind, or the
 *    connection is down), the pipe they came from is not read, so the command waits on its own
 *    writes instead of the agent's memory growing. Once the group is gone, what is left in the
 *    pipes is read without waiting (it is bounded) so the attempt can end.
 * 6. Usage increments (`::gaffer::` usage, adapters) go to Gaffer as they come (usage.ts); the
 *    attempt ends only after they were sent, so they land before the report or result.
 */
import fs from 'node:fs';
import path from 'node:path';
import { exceedsUtf8Bytes, jsonDeeperThan, MAX_JSON_BYTES, MAX_JSON_DEPTH } from '../../common/schemas';
import { findIllFormedText, wellFormedDeep } from '../../common/text';
import type { AdapterDefinition, AdapterSink, LineExtra } from './adapters';
import { CONTROL_TOKEN_VARIABLE, type ControlMessage, controlPrefix, describeProgress, looksLikeControl, newControlToken, parseControlBody } from './control-lines';
import { withVariables } from './environment';
import { cutText, LineSplitter, MAX_LINE_CHARS, OutputBudget, type OutputLimits } from './lines';
import type { AttemptOutput, LogLevel, LogLine, LogStream, WorkRef } from './log-sink';
import type { Ending } from './outcome';
import type { Lifeline } from './lifeline';
import { GroupChild } from './process-group';
import { UsageMeter, UsageReporter, type UsageIncrement, type UsageTotals } from './usage';

export interface CommandSpec {
  command: string;
  args: readonly string[];
  shell: boolean;
  cwd?: string;
  /** Per-attempt time limit (seconds). */
  timeoutS?: number;
  /** SIGTERM → SIGKILL delay (PROTOCOL §6: 10 s). */
  killAfterMs: number;
  /** The agent's own log budget per attempt (--max-log-lines/--max-log-bytes); none: Gaffer's caps. */
  limits?: OutputLimits;
  adapter?: AdapterDefinition;
  /** The model the CLI runs (`--model`), for an adapter whose stream names none. */
  model?: string;
}

export interface AttemptContext {
  spec: CommandSpec;
  /** The environment the child inherits, secrets already removed (environment.ts `inheritedEnvironment`). */
  inheritedEnv: Readonly<Record<string, string>>;
  /** A private directory for payload and output files. */
  workDir: string;
  /** The agent's watchdog (lifeline.ts): the command's family dies with the agent. */
  lifeline?: Lifeline;
}

export interface AttemptInput {
  ref: WorkRef;
  /** Where the attempt's lines and usage go (the task's or run's log and usage). */
  out: AttemptOutput;
  /** The GAFFER_* variables of this attempt, without the two file paths. */
  vars: Record<string, string>;
  payload: unknown;
  /** Aborted when the work is taken away; its reason is reported in the log. */
  signal: AbortSignal;
  /** Records a checkpoint; rejecting stops the attempt (invariant 3). */
  onStep?: (step: { name: string; ref?: string }) => Promise<unknown>;
  /** Tells whether an error from `onStep` means the work was taken away. */
  isTakenAway?: (e: unknown) => boolean;
}

export interface AttemptResult {
  ending: Ending;
  /** From the output file, else the adapter's final answer. */
  output?: unknown;
  /** Things the operator should know (a malformed output file, truncated output, usage Gaffer refused). */
  problems: string[];
  /** What the command reported using (sent to Gaffer as it came). */
  usage: UsageTotals | null;
  /** The last stderr line, for the report note. */
  lastStderr?: string;
  /** The CLI's own error words from its JSON output (the adapter's `error()`), for the report note. */
  cliError?: string;
  /** `link` / `file` artifacts the command announced with control lines (PROTOCOL §15), in order. */
  artifacts: NonNullable<ControlMessage['artifact']>[];
  /** PROTOCOL §16: the CLI's conversation id its adapter saw (the last one), to continue it later. */
  session?: { cli: string; sessionId: string };
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
  private readonly budget: OutputBudget | undefined;
  private readonly usage = new UsageMeter();
  private readonly usageReporter: UsageReporter;
  /** Invariant 5: the group is gone; read what is left without waiting. */
  private released = false;
  private readonly held = new Set<NodeJS.ReadableStream>();
  /** The latest write to the log of the chunk being read (its promise: room for more). */
  private pressure: Promise<void> | undefined;
  private readonly problems: string[] = [];
  private steps: Promise<void> = Promise.resolve();
  private lastStderr: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly started = Date.now();
  /** This attempt's control token and the prefix of its control lines (invariant 2). */
  private readonly controlToken = newControlToken();
  private readonly ownPrefix = controlPrefix(this.controlToken);
  private unsignedFlagged = false;

  constructor(
    private readonly ctx: AttemptContext,
    private readonly input: AttemptInput,
  ) {
    this.budget = ctx.spec.limits ? new OutputBudget(ctx.spec.limits) : undefined;
    this.usageReporter = new UsageReporter((u) => input.out.usage(u));
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
    if (signal.aborted) return { ending: { kind: 'taken_away', reason: reasonText(signal) }, problems: [], usage: null, artifacts: [] };
    const base = path.join(this.ctx.workDir, `${this.input.ref.kind}-${this.input.ref.id.replace(/[^\w.-]/g, '_')}-${this.input.ref.attempt}-${++fileSeq}`);
    const payloadFile = `${base}.payload.json`;
    const outputFile = `${base}.output.json`;
    const payloadText = JSON.stringify(this.input.payload ?? null);
    try {
      fs.writeFileSync(payloadFile, payloadText, { mode: 0o600 });
      const env = withVariables(this.ctx.inheritedEnv, {
        ...this.input.vars,
        GAFFER_PAYLOAD_FILE: payloadFile,
        GAFFER_OUTPUT_FILE: outputFile,
        [CONTROL_TOKEN_VARIABLE]: this.controlToken,
      });
      const lifeline = this.ctx.lifeline;
      const marker = lifeline?.nextMarker();
      const child = new GroupChild({ command: spec.command, args: spec.args, shell: spec.shell, env, ...(spec.cwd ? { cwd: spec.cwd } : {}), ...(marker ? { marker } : {}) });
      this.child = child;
      lifeline?.hold(child.pid);
      const onAbort = () => this.interrupt({ kind: 'taken_away', reason: reasonText(signal) });
      signal.addEventListener('abort', onAbort, { once: true });
      if (spec.timeoutS !== undefined) this.timer = setTimeout(() => this.interrupt({ kind: 'timeout', afterS: spec.timeoutS! }), spec.timeoutS * 1000);
      try {
        const streamsDone = this.wireOutput(child);
        child.child.stdin?.end(`${payloadText}\n`);
        const exit = await child.settled(spec.killAfterMs);
        lifeline?.release(child.pid);
        this.release();
        if (this.forced === undefined && exit.spawnError) {
          const e = exit.spawnError;
          return { ending: { kind: 'spawn_failed', reason: `${e.code ?? 'error'}: ${e.message}` }, problems: [], usage: null, artifacts: [] };
        }
        // The group is gone, so the pipes are closing; a process that left the group on purpose
        // (and shed its marker) may still hold them: stop reading after a moment rather than wait for it.
        let stragglers: NodeJS.Timeout | undefined;
        await Promise.race([streamsDone, new Promise<void>((r) => (stragglers = setTimeout(r, 1000)))]);
        clearTimeout(stragglers);
        child.child.stdout?.destroy();
        child.child.stderr?.destroy();
        await streamsDone;
        await this.steps;
        await this.usageReporter.settled();
        const ending: Ending = this.forced ?? (exit.code !== null ? { kind: 'exited', code: exit.code } : { kind: 'signalled', signal: exit.signal ?? 'a signal' });
        if (ending.kind !== 'taken_away') for (const f of this.usageReporter.failures) this.problems.push(`usage not recorded by Gaffer: ${f}`);
        const output = ending.kind === 'taken_away' ? undefined : this.readOutput(outputFile);
        return {
          ending,
          ...(output !== undefined ? { output } : {}),
          problems: this.problems,
          usage: this.usage.total,
          artifacts: this.artifacts,
          ...(this.lastStderr ? { lastStderr: this.lastStderr } : {}),
          ...(this.cliError ? { cliError: this.cliError } : {}),
          ...(this.session ? { session: this.session } : {}),
        };
      } finally {
        lifeline?.release(child.pid);
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
    const adapter = this.ctx.spec.adapter?.create({ model: this.ctx.spec.model });
    const adapterSink: AdapterSink = {
      log: (text, level, extra) => this.log('stdout', text, level, extra),
      usage: (u) => this.addUsage(u),
      session: (cli, sessionId) => {
        this.session = { cli, sessionId };
      },
    };
    const streams: Array<[NodeJS.ReadableStream | null, LogStream]> = [
      [child.child.stdout, 'stdout'],
      [child.child.stderr, 'stderr'],
    ];
    const ended = streams.map(([stream, name]) => {
      if (!stream) return Promise.resolve();
      const splitter = new LineSplitter((line) => {
        if (line.startsWith(this.ownPrefix)) this.control(line.slice(this.ownPrefix.length));
        else if (name === 'stdout' && adapter?.line(line, adapterSink)) return;
        else {
          if (name === 'stderr' && line.trim()) this.lastStderr = cutText(line, 500, '…');
          this.log(name, line);
          if (looksLikeControl(line, this.ownPrefix)) this.flagUnsigned();
        }
      }, MAX_LINE_CHARS);
      return new Promise<void>((resolve) => {
        stream.on('data', (chunk: Buffer) => {
          this.pressure = undefined;
          splitter.push(chunk);
          if (this.pressure) this.holdBack(stream, this.pressure);
        });
        stream.once('close', () => {
          splitter.end();
          if (name === 'stdout') adapter?.end?.(adapterSink);
          resolve();
        });
      });
    });
    return Promise.all(ended).then(() => {
      if (adapter) {
        this.adapterOutput = adapter.result();
        const err = adapter.error?.();
        if (err) this.cliError = cutText(err.replace(/\s+/g, ' ').trim(), 1000, '…');
      }
    });
  }

  private adapterOutput: Record<string, unknown> | undefined;
  private cliError: string | undefined;
  private session: { cli: string; sessionId: string } | undefined;

  /**
   * Invariant 5: the SDK has no room for more lines; stop reading `stream` until it has. (The
   * promise of a write the SDK has room for resolves at once: the pause is one microtask.)
   */
  private holdBack(stream: NodeJS.ReadableStream, room: Promise<void>): void {
    if (this.released) return;
    stream.pause();
    this.held.add(stream);
    const resume = () => {
      if (this.held.delete(stream)) stream.resume();
    };
    room.then(resume, resume);
  }

  /** Invariant 5: the group is gone; what is left in the pipes is read at once. */
  private release(): void {
    this.released = true;
    for (const s of this.held) s.resume();
    this.held.clear();
  }

  private log(stream: LogStream, text: string, level?: LogLevel, extra?: LineExtra): void {
    const verdict = this.budget?.admit(text) ?? { verdict: 'keep' };
    if (verdict.verdict === 'drop') return;
    if (verdict.verdict === 'notice') {
      this.write({ text: verdict.text, stream: 'agent', level: 'warn' });
      this.problems.push('output truncated (over the agent\'s log limit)');
      return;
    }
    this.write({ text, stream, ...(level ? { level } : {}), ...extra });
  }

  private agentLine(text: string, level: LogLevel = 'info'): void {
    this.write({ text, stream: 'agent', level });
  }

  private write(line: LogLine): void {
    this.pressure = this.input.out.log(line);
  }

  private addUsage(u: UsageIncrement): void {
    this.usage.add(u);
    this.usageReporter.add(u);
  }

  /** `body`: what follows this attempt's control prefix (the token is never logged). */
  private control(body: string): void {
    const parsed = parseControlBody(body);
    if (!parsed.ok) {
      this.agentLine(`ignored a malformed control line (${parsed.reason}): ${cutText(body.trim(), 300, '…')}`, 'warn');
      return;
    }
    const m = parsed.message;
    if (m.log) this.log('stdout', m.log.text, m.log.level);
    if (m.progress) this.agentLine(describeProgress(m.progress));
    if (m.usage) this.addUsage(m.usage);
    if (m.step) this.step(m.step);
    if (m.artifact) {
      this.artifacts.push(m.artifact);
      this.agentLine(`${m.artifact.kind} "${m.artifact.name}": ${'url' in m.artifact.data ? m.artifact.data.url : m.artifact.data.path}`);
    }
  }

  private readonly artifacts: NonNullable<ControlMessage['artifact']>[] = [];

  /** Control-lines invariant 2: said once per attempt, after the first such line. */
  private flagUnsigned(): void {
    if (this.unsignedFlagged) return;
    this.unsignedFlagged = true;
    this.agentLine(
      `a line starting with "::gaffer:" without this attempt's ${CONTROL_TOKEN_VARIABLE} was logged as text, not obeyed: control lines are "::gaffer:$${CONTROL_TOKEN_VARIABLE}:: {…}" (docs/command-agent.md)`,
      'warn',
    );
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
