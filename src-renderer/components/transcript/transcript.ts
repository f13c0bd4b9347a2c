/**
 * An attempt's log lines read as a conversation (PROTOCOL §16): the lines the CLI adapters marked
 * with a `kind` become messages, tool calls (with their result attached), results and errors;
 * plain output lines in a row become one block. Pure: the transcript view renders what this builds.
 *
 * Rules:
 * 1. A line with a kind but no data that follows an item of the same kind continues it (a text
 *    the store split into pieces: only the first piece carries the data).
 * 2. A tool result joins the call with the same `id`, else the latest call of the same name still
 *    without a result; with neither, it stands alone (Codex reports some tools as results only).
 * 3. Nothing is dropped: a line that fits no rule is plain output.
 */
import type { LogLine, LogStream } from '../../../src-main/common/logs';

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
}

export type TranscriptItem =
  | { type: 'message'; seq: number; at: string; text: string; thinking: boolean; model?: string; usage?: Usage }
  | {
      type: 'tool';
      seq: number;
      at: string;
      name: string;
      id?: string;
      input?: unknown;
      output?: unknown;
      /** The result arrived (a call without one is still running, or was cut short). */
      done: boolean;
      isError: boolean;
      exitCode?: number;
      usage?: Usage;
    }
  | { type: 'result'; seq: number; at: string; text: string; isError: boolean; costUsd?: number; usage?: Usage; numTurns?: number; durationMs?: number }
  | { type: 'system'; seq: number; at: string; text: string }
  | { type: 'error'; seq: number; at: string; text: string }
  | { type: 'output'; seq: number; at: string; stream: LogStream; lines: string[]; warn: boolean };

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
function usageOf(v: unknown): Usage | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const u = v as Record<string, unknown>;
  const inputTokens = num(u.inputTokens);
  const outputTokens = num(u.outputTokens);
  return inputTokens === undefined && outputTokens === undefined ? undefined : { ...(inputTokens !== undefined ? { inputTokens } : {}), ...(outputTokens !== undefined ? { outputTokens } : {}) };
}

/** Builds the transcript of `lines` (one attempt's, oldest first). */
export function buildTranscript(lines: readonly LogLine[]): TranscriptItem[] {
  return new TranscriptBuilder().build(lines);
}

type ToolItem = Extract<TranscriptItem, { type: 'tool' }>;

/**
 * The transcript of a growing list of lines, read once: while an attempt is followed live each
 * fetch appends lines, and rebuilding (and re-estimating) ten thousand items for every new line
 * cost a frame (about 30–120 ms at 16 000 items). `build` reads only the lines after those it has
 * seen when the new list extends the old one (same first and last-seen line objects), else starts
 * over. Items are copied before they change (a continuation, an output line, a tool's result), so
 * an item returned before is never mutated and an unchanged one keeps its identity.
 */
export class TranscriptBuilder {
  private items: TranscriptItem[] = [];
  /** Tool calls by `id`: the index of their item. */
  private calls = new Map<string, number>();
  private lastKind: string | undefined;
  private first: LogLine | undefined;
  private last: LogLine | undefined;
  private read = 0;
  /** Items at or past this index were made during the current `build` (free to change in place). */
  private fresh = 0;

  build(lines: readonly LogLine[]): TranscriptItem[] {
    const extends_ = this.read > 0 && lines.length >= this.read && lines[0] === this.first && lines[this.read - 1] === this.last;
    if (!extends_) this.reset();
    this.fresh = this.items.length;
    for (let i = this.read; i < lines.length; i++) this.add(lines[i]!);
    this.read = lines.length;
    this.first = lines[0];
    this.last = lines[lines.length - 1];
    return this.items.slice();
  }

  /**
   * The transcript once `lines` (the lines after every line given before, oldest first) are read
   * too: the caller need not keep the lines, only this builder. Same rules as `build`.
   */
  append(lines: readonly LogLine[]): TranscriptItem[] {
    this.fresh = this.items.length;
    for (const l of lines) this.add(l);
    this.read = 0; // `build` after `append` starts over: it has no list to compare with
    this.first = this.last = undefined;
    return this.items.slice();
  }

  private reset(): void {
    this.items = [];
    this.calls = new Map();
    this.lastKind = undefined;
    this.read = 0;
  }

  /** The item at `i`, copied first when an earlier `build` returned it. */
  private writable(i: number): TranscriptItem {
    const it = this.items[i]!;
    if (i >= this.fresh) return it;
    const copy = it.type === 'output' ? { ...it, lines: [...it.lines] } : { ...it };
    this.items[i] = copy;
    return copy;
  }

  private add(l: LogLine): void {
    const items = this.items;
    const last = items.length - 1;
    const prev = items[last];
    const d = l.data;
    // Rule 1: a continuation piece.
    if (l.kind && !d && prev && this.lastKind === l.kind) {
      if (prev.type === 'message' || prev.type === 'result' || prev.type === 'system' || prev.type === 'error') {
        const p = this.writable(last) as typeof prev;
        p.text += `\n${l.text}`;
      }
      return;
    }
    this.lastKind = l.kind;
    const base = { seq: l.seq, at: l.at };
    switch (l.kind) {
      case 'assistant':
        items.push({ type: 'message', ...base, text: l.text, thinking: d?.thinking === true, ...(str(d?.model) ? { model: str(d?.model)! } : {}), ...(usageOf(d?.usage) ? { usage: usageOf(d?.usage)! } : {}) });
        return;
      case 'tool_call': {
        const item: ToolItem = {
          type: 'tool',
          ...base,
          name: str(d?.name) ?? 'tool',
          ...(str(d?.id) ? { id: str(d?.id)! } : {}),
          ...(d && 'input' in d ? { input: d.input } : { input: l.text }),
          done: false,
          isError: false,
          ...(usageOf(d?.usage) ? { usage: usageOf(d?.usage)! } : {}),
        };
        items.push(item);
        if (item.id) this.calls.set(item.id, items.length - 1);
        return;
      }
      case 'tool_result': {
        const id = str(d?.id);
        // Rule 2.
        let at = id ? this.calls.get(id) : undefined;
        if (at === undefined) {
          const name = str(d?.name);
          for (let i = items.length - 1; i >= 0 && at === undefined; i--) {
            const it = items[i]!;
            if (it.type === 'tool' && !it.done && name !== undefined && it.name === name && it.id === undefined) at = i;
          }
        }
        const isError = d?.isError === true || l.level === 'error';
        const output = d && 'output' in d ? d.output : l.text;
        if (at !== undefined) {
          const call = this.writable(at) as ToolItem;
          call.done = true;
          call.output = output;
          call.isError = isError;
          if (num(d?.exitCode) !== undefined) call.exitCode = num(d?.exitCode)!;
        } else {
          items.push({
            type: 'tool',
            ...base,
            name: str(d?.name) ?? 'tool',
            ...(id ? { id } : {}),
            ...(d && 'input' in d ? { input: d.input } : {}),
            output,
            done: true,
            isError,
            ...(num(d?.exitCode) !== undefined ? { exitCode: num(d?.exitCode)! } : {}),
          });
        }
        return;
      }
      case 'result': {
        const text = str(d?.result) ?? l.text;
        items.push({
          type: 'result',
          ...base,
          text,
          isError: d?.isError === true || l.level === 'error',
          ...(num(d?.costUsd) !== undefined ? { costUsd: num(d?.costUsd)! } : {}),
          ...(usageOf(d?.usage) ? { usage: usageOf(d?.usage)! } : {}),
          ...(num(d?.numTurns) !== undefined ? { numTurns: num(d?.numTurns)! } : {}),
          ...(num(d?.durationMs) !== undefined ? { durationMs: num(d?.durationMs)! } : {}),
        });
        return;
      }
      case 'system':
        items.push({ type: 'system', ...base, text: l.text });
        return;
      case 'error':
        items.push({ type: 'error', ...base, text: l.text });
        return;
      default: {
        // Rule 3: plain output, consecutive lines of one stream in one block.
        if (prev && prev.type === 'output' && prev.stream === l.stream && !l.kind) {
          const p = this.writable(last) as typeof prev;
          p.lines.push(l.text);
          p.warn ||= l.level === 'warn' || l.level === 'error';
        } else items.push({ type: 'output', ...base, stream: l.stream, lines: [l.text], warn: l.level === 'warn' || l.level === 'error' });
      }
    }
  }
}

/** One formatter for every row (`toLocaleString` builds one per call: it showed in the scroll profile). */
const COUNT = new Intl.NumberFormat('en');

/** "12 in · 40 out" for a message's own tokens. */
export function usageWords(u: Usage | undefined): string | null {
  if (!u) return null;
  const parts: string[] = [];
  if (u.inputTokens !== undefined) parts.push(`${COUNT.format(u.inputTokens)} in`);
  if (u.outputTokens !== undefined) parts.push(`${COUNT.format(u.outputTokens)} out`);
  return parts.length ? `${parts.join(' · ')} tokens` : null;
}

/**
 * A row's height before it is measured (px), from its text: the virtual list places rows and sizes
 * its scroll bar by these until each row is on screen and measured, so an estimate near the truth
 * keeps the list from jumping while it scrolls (a flat guess was 3–6× short for long messages).
 * Tool calls are closed (their summary line); text wraps at about `charsPerLine`.
 */
export function estimateHeight(item: TranscriptItem, charsPerLine = 110): number {
  const lines = (text: string, px: number) => text.split('\n').reduce((n, l) => n + Math.max(1, Math.ceil(l.length / charsPerLine)), 0) * px;
  switch (item.type) {
    case 'message':
      return 40 + lines(item.text, 20);
    case 'result':
      return 46 + lines(item.text, 20);
    case 'tool':
      return 44;
    case 'output':
      return 16 + lines(item.lines.join('\n'), 17);
    case 'system':
    case 'error':
      return 10 + lines(item.text, 18);
  }
}

/**
 * Row heights learned on screen, per class of row the estimate cannot tell apart (same type, same
 * estimate, same list width): a row's first measured height (closed tool calls: rows mount closed)
 * becomes the estimate of the rows of its class not measured yet. Most rows are one-line tool
 * calls, notes and output blocks whose class has one height: estimated right, mounting them moves
 * nothing, and the virtual list neither re-lays out the rows below nor adjusts the scroll.
 */
export class LearnedHeights {
  /** Learned heights by list width, then by class: a number, not a string (see `classOf`). */
  private readonly heights = new Map<number, Map<number, number>>();
  /**
   * A row's class as one number (estimate × 8 + type): the virtual list asks for the estimate of
   * every row below a newly measured one, 10 000 at the top of a long transcript, and a string key
   * built for each was that many strings for the collector per row mounted.
   */
  private classOf(item: TranscriptItem, estimate: number): number {
    return estimate * 8 + TYPE_INDEX[item.type];
  }
  /** The height to place `item` by before it is measured. */
  estimate(item: TranscriptItem, estimate: number, width: number): number {
    return this.heights.get(Math.round(width))?.get(this.classOf(item, estimate)) ?? estimate;
  }
  /** `item` was measured for the first time at `height`. */
  learn(item: TranscriptItem, estimate: number, width: number, height: number): void {
    const w = Math.round(width);
    let byClass = this.heights.get(w);
    if (!byClass) this.heights.set(w, (byClass = new Map()));
    byClass.set(this.classOf(item, estimate), height);
  }
}

const TYPE_INDEX: Record<TranscriptItem['type'], number> = { message: 0, tool: 1, result: 2, system: 3, error: 4, output: 5 };
