/**
 * Tokens and cost an attempt used, as increments (PROTOCOL §5 `usage`: Gaffer sums them). The
 * command reports them on `::gaffer::` lines, or an adapter reads them from a CLI's JSON output;
 * the `UsageReporter` sends them to Gaffer as they come (a run's budget is checked against them
 * while it runs).
 *
 * Invariants (UsageReporter):
 * 1. One `usage` frame in flight at a time; increments that arrive meanwhile are summed (per
 *    kind: the SDK's `usageKind`, so a cost of its own is never summed with tokens left for
 *    Gaffer to price) into the next frames, so a chatty adapter costs a frame per round trip, not per line.
 * 2. `settled()` resolves once every increment added before it was sent or refused: the attempt
 *    waits for it, so usage always lands before the report or result.
 * 3. A refused increment is not lost silently: `failures` says what Gaffer did not record.
 * 4. A final report (PROTOCOL §14 `final`: the attempt's totals, e.g. the CLI's own cost) is never
 *    summed with an increment: it goes in a frame of its own after every increment added before
 *    it, and a later final replaces one still waiting. The meter's totals become its figures.
 */

import { cutText } from '../../common/line-splitter';
import { usageKind, type UsageInput } from '../../sdk';

/** A usage report from a CLI's stream: the SDK's `ctx.usage` input (increments, or the attempt's totals with `final`). */
export type UsageIncrement = UsageInput;

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  models: string[];
}

/** What one `usage` frame may carry (PROTOCOL §5: the server refuses more). */
const MAX_TOKENS = 1e12;
const MAX_COST_USD = 1e6;

const count = (v: unknown, max: number): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= max ? v : undefined);

/** A usage increment from untrusted JSON: only non-negative finite numbers a frame may carry count; undefined when nothing does. */
export function usageFrom(raw: unknown): UsageIncrement | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as Record<string, unknown>;
  const u: UsageIncrement = {};
  const input = count(r.inputTokens, MAX_TOKENS);
  const output = count(r.outputTokens, MAX_TOKENS);
  const cost = count(r.costUsd, MAX_COST_USD);
  if (input !== undefined) u.inputTokens = Math.round(input);
  if (output !== undefined) u.outputTokens = Math.round(output);
  if (cost !== undefined) u.costUsd = cost;
  if (typeof r.model === 'string' && r.model.trim()) u.model = cutText(r.model.trim(), 200);
  const read = count(r.cacheReadTokens, MAX_TOKENS);
  const write = count(r.cacheWriteTokens, MAX_TOKENS);
  if (read !== undefined) u.cacheReadTokens = Math.round(read);
  if (write !== undefined) u.cacheWriteTokens = Math.round(write);
  if (r.estimated === true) u.estimated = true;
  if (r.final === true) u.final = true;
  return u.inputTokens === undefined && u.outputTokens === undefined && u.costUsd === undefined ? undefined : u;
}

export class UsageMeter {
  private totals: UsageTotals | null = null;

  add(u: UsageIncrement): void {
    const t = (this.totals ??= { inputTokens: 0, outputTokens: 0, costUsd: 0, models: [] });
    if (u.final) {
      // Invariant 4: the totals are the final figures (a figure left out keeps the sum so far).
      t.inputTokens = u.inputTokens ?? t.inputTokens;
      t.outputTokens = u.outputTokens ?? t.outputTokens;
      t.costUsd = u.costUsd ?? t.costUsd;
      if (u.model && !t.models.includes(u.model)) t.models.push(u.model);
      return;
    }
    t.inputTokens += u.inputTokens ?? 0;
    t.outputTokens += u.outputTokens ?? 0;
    t.costUsd += u.costUsd ?? 0;
    if (u.model && !t.models.includes(u.model)) t.models.push(u.model);
  }

  /** Null when nothing was reported. */
  get total(): UsageTotals | null {
    return this.totals ? { ...this.totals, models: [...this.totals.models] } : null;
  }
}

export function describeUsage(u: UsageTotals): string {
  const cost = u.costUsd > 0 ? `, $${u.costUsd.toFixed(u.costUsd < 0.01 ? 6 : 4)}` : '';
  const models = u.models.length ? ` (${u.models.join(', ')})` : '';
  return `${u.inputTokens} input + ${u.outputTokens} output tokens${cost}${models}`;
}

const SUMMED = ['inputTokens', 'outputTokens', 'costUsd', 'cacheReadTokens', 'cacheWriteTokens'] as const;

function merge(a: UsageIncrement, b: UsageIncrement): UsageIncrement {
  const out: UsageIncrement = {};
  for (const k of SUMMED) {
    const x = a[k];
    const y = b[k];
    const v = x === undefined ? y : y === undefined ? x : x + y;
    if (v !== undefined) out[k] = v;
  }
  if (a.model !== undefined) out.model = a.model;
  if (a.estimated || b.estimated) out.estimated = true;
  return out;
}

/** The waiting-map key of the final report: no kind can be it (`usageKind` always holds a NUL). */
const FINAL = ' final';

export class UsageReporter {
  /** Increments waiting, summed per kind (`usageKind`), in the order their kind first came. */
  private readonly waiting = new Map<string, UsageIncrement>();
  private pump: Promise<void> | undefined;
  /** Invariant 3: one entry per refused frame (`code: message`). */
  readonly failures: string[] = [];

  constructor(private readonly send: (u: UsageIncrement) => Promise<unknown>) {}

  add(u: UsageIncrement): void {
    if (u.final) {
      // Invariant 4: after every increment waiting now, replacing a final still waiting.
      this.waiting.delete(FINAL);
      this.waiting.set(FINAL, { ...u });
    } else {
      const key = usageKind(u);
      const before = this.waiting.get(key);
      this.waiting.set(key, before ? merge(before, u) : { ...u });
      // An increment that comes after a final one waiting must not be sent before it.
      const fin = this.waiting.get(FINAL);
      if (fin) {
        this.waiting.delete(FINAL);
        this.waiting.set(FINAL, fin); // rare (usage after the CLI's result): the final figures win
      }
    }
    this.pump ??= this.drain();
  }

  /** Invariant 2. */
  async settled(): Promise<void> {
    while (this.pump) await this.pump;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const next = this.waiting.entries().next();
        if (next.done) return;
        const [key, u] = next.value;
        this.waiting.delete(key);
        try {
          await this.send(u);
        } catch (e) {
          const code = (e as { code?: unknown } | null)?.code;
          this.failures.push(`${typeof code === 'string' ? `${code}: ` : ''}${e instanceof Error ? e.message : String(e)}`);
        }
      }
    } finally {
      this.pump = undefined;
    }
  }
}
