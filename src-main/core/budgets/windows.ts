/**
 * Rolling spend windows (PROTOCOL §14, `PUT /job-settings/budgets` `windows`): for CLIs billed by
 * subscription, whose limits are tokens per 5 hours or per week rather than dollars per day.
 *
 * Invariants:
 * 1. A window covers the last `hours` up to now: spend is what the usage ledger holds in
 *    [now − hours, now), of its role or of all roles. It is reached when its tokens or its cost are
 *    at or above a cap; while reached nothing of its scope is dispatched (the budget verdict of
 *    layer 3) or claimed (P2), exactly like a daily cap.
 * 2. Read like the daily caps (budgets.ts invariant 3): cached for `CACHE_MS` of monotonic time,
 *    each usage report added to the cache in its own transaction, nothing read without windows.
 * 3. "Frees at" is exact: the moment enough of the oldest spend leaves the window for both figures
 *    to be under their caps, computed from the reports in the window only while it is reached.
 * 4. One `quota` inbox item per window reached, resolved by Gaffer once the window frees.
 */
import { DateTime } from 'luxon';
import type { SpendWindow, WindowStatus } from '../../common/attention';
import type { CoreContext } from '../context';
import type { Inbox } from '../inbox';
import { NANO, type SpendSource } from './spend';

const CACHE_MS = 1000;
const HOUR = 3_600_000;

/** "1.9M", "250k", "900". */
export function tokenWords(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(2)}M`;
  if (n >= 1e4) return `${+(n / 1e3).toFixed(1)}k`;
  return String(n);
}

const windowName = (w: SpendWindow) => `the ${+w.hours.toFixed(2)}-hour window ${w.scope === 'global' ? 'for all roles' : `for role ${w.role}`}`;
const subjectOf = (w: SpendWindow) => `window:${w.scope === 'global' ? 'global' : `role:${w.role}`}:${w.hours}h`;

export class SpendWindows {
  private cache: { at: number; windows: WindowStatus[]; nano: number[] } | null = null;

  constructor(
    private readonly ctx: Pick<CoreContext, 'clock' | 'db'>,
    private readonly spend: SpendSource,
    private readonly inbox: Pick<Inbox, 'raise' | 'resolve'>,
    private readonly settings: () => { windows: SpendWindow[]; zone: string },
  ) {}

  /** Settings changed: read afresh. */
  invalidate(): void {
    this.cache = null;
  }

  /** Every window now (invariant 2: cached). */
  status(now: number = this.ctx.clock.now()): WindowStatus[] {
    const { windows } = this.settings();
    if (windows.length === 0) return [];
    const mono = this.ctx.clock.monotonic();
    if (!this.cache || mono - this.cache.at >= CACHE_MS) {
      const nano: number[] = [];
      const list = windows.map((w) => {
        const s = this.spend.between(now - w.hours * HOUR, now + 1, w.role);
        nano.push(s.nano);
        return this.withSpend(w, s.nano, s.tokens, now);
      });
      this.cache = { at: mono, windows: list, nano };
    }
    return this.cache.windows;
  }

  private withSpend(w: SpendWindow, nano: number, tokens: number, now: number): WindowStatus {
    const costUsd = nano / NANO;
    const reached = (w.maxTokens !== undefined && tokens >= w.maxTokens) || (w.maxCostUsd !== undefined && costUsd >= w.maxCostUsd);
    return { ...w, tokens, costUsd, reached, freesAt: reached ? this.freesAt(w, nano, tokens, now) : null, name: windowName(w) };
  }

  /** Invariant 3: when the oldest reports have left the window enough for it to be under both caps. */
  private freesAt(w: SpendWindow, nano: number, tokens: number, now: number): string {
    const from = now - w.hours * HOUR;
    let n = nano;
    let t = tokens;
    for (const r of this.spend.reports(from, now + 1, w.role)) {
      n -= r.nano;
      t -= r.tokens;
      const under = (w.maxTokens === undefined || t < w.maxTokens) && (w.maxCostUsd === undefined || n / NANO < w.maxCostUsd);
      if (under) return new Date(r.at + w.hours * HOUR).toISOString();
    }
    return new Date(now + w.hours * HOUR).toISOString();
  }

  /** A usage report of `role` was just recorded (invariant 2); true when it used a window up. */
  noteSpend(role: string, nano: number, tokens: number, now: number): boolean {
    const c = this.cache;
    if (!c || (nano === 0 && tokens === 0)) return false;
    let newly = false;
    c.windows = c.windows.map((w, i) => {
      if (w.scope === 'role' && w.role !== role) return w;
      c.nano[i]! += nano;
      const next = this.withSpend(w, c.nano[i]!, w.tokens + tokens, now);
      newly ||= next.reached && !w.reached;
      return next;
    });
    return newly;
  }

  /** The first used-up window covering `role`, if any. */
  reachedFor(role: string, now: number): WindowStatus | null {
    return this.status(now).find((w) => w.reached && (w.scope === 'global' || w.role === role)) ?? null;
  }

  /** Why nothing of `role` runs now, in words ("the 5-hour window for role dev is used up: 1.9M of 2M tokens; frees at 14:20"). */
  words(w: WindowStatus): string {
    const what =
      w.maxTokens !== undefined && w.tokens >= w.maxTokens ? `${tokenWords(w.tokens)} of ${tokenWords(w.maxTokens)} tokens` : `$${w.costUsd.toFixed(2)} of $${(w.maxCostUsd ?? 0).toFixed(2)}`;
    const frees = w.freesAt ? DateTime.fromISO(w.freesAt, { zone: this.settings().zone }).toFormat('HH:mm') : '?';
    return `${w.name} is used up: ${what}; frees at ${frees}`;
  }

  /** Invariant 4: an item per window used up; resolved once it is free again. Run after bursts and by the sweep. */
  raiseAndResolve(now: number = this.ctx.clock.now()): void {
    for (const w of this.status(now)) {
      const subject = subjectOf(w);
      if (w.reached) {
        this.inbox.raise({
          key: `${subject}:${w.freesAt}`,
          kind: 'quota',
          subject,
          about: { scope: w.scope, role: w.role ?? null, hours: w.hours },
          entry: {
            title: `${w.name[0]!.toUpperCase()}${w.name.slice(1)} is used up`,
            detail: `${this.words(w)} (${this.settings().zone}). Nothing of ${w.scope === 'global' ? 'any role' : `role ${w.role}`} is dispatched or handed out until then, or until you raise the window's cap.`,
            tokens: w.tokens,
            costUsd: w.costUsd,
            ...(w.maxTokens !== undefined ? { maxTokens: w.maxTokens } : {}),
            ...(w.maxCostUsd !== undefined ? { maxCostUsd: w.maxCostUsd } : {}),
            freesAt: w.freesAt,
          },
        });
      } else {
        this.inbox.resolve('quota', subject, `${w.name} has room again`);
      }
    }
  }
}
