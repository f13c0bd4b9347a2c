/**
 * Daily spend caps per role and global (PROTOCOL §8, `PUT /job-settings/budgets`): execution
 * conditions of layer 3.
 *
 * Invariants:
 * 1. A day runs from midnight to midnight in the operator's zone (the settings' `timezone`, else
 *    the machine's), stated with every verdict; spend is what the usage ledger holds for that day.
 * 2. A cap is reached when the day's spend is at or above it. While a role's cap or the global cap
 *    is reached, nothing of that scope is dispatched (the runner's verdict names the cap, the spend
 *    so far and the reset) and `claim` answers "no task" for it (P2).
 * 3. The claim path never waits on a sum: the spend per scope is cached for `CACHE_MS` of
 *    monotonic time, and with no cap set nothing is read at all. Each usage report is added to
 *    the cached spend in the report's own transaction (`usageRecorded`), so the usage that
 *    reaches a cap gates the very next claim or dispatch, even one in the same group commit; the
 *    refresh from the ledger every `CACHE_MS` is what corrects the cache otherwise (a settings
 *    change drops it at once).
 * 4. A cap reached is one inbox item per scope and day (`cap:<scope>:<day>`), raised after the
 *    burst that noticed it, never inside a claim's transaction.
 * 5. A settings change is validated before anything is written and audited (`budgets.update`).
 * 6. Per-run caps (the job field `budget`): an attempt in flight whose reported usage passes its
 *    job's cap (cost or tokens of this attempt) is taken away at once (`run_cancelled`, reason
 *    `budget`) and held for the operator, with one `budget` inbox item per attempt. An approved
 *    re-run is a new attempt with the cap afresh. "At once" is in the usage report's own
 *    transaction: a `run_result` (or `report`, invariant 7) sent behind it, even in the same write
 *    and so in the same group commit, finds the attempt taken away and is refused `not_holder`,
 *    exactly as it would be a round trip later (PROTOCOL §8: past its cap the work is held for the
 *    operator, never counted as done). The cap is the run's own when the operator approved it with
 *    one (`runs.budget`, PROTOCOL §14), else its job's.
 * 7. The same for a task created with a `budget`: the holder's lock is taken away (`lock_lost`,
 *    reason `budget`), the task is blocked with the spend in its note, and the attempt is marked
 *    stopped in `task_budgets` (so the blocked task is this budget item, not a needs-human one).
 *    Unblocked, its next claim is a new attempt with the cap afresh.
 */
import { DateTime } from 'luxon';
import { budgetsInput, type BudgetSettings, type BudgetsView, type CapStatus, type SpendWindow } from '../../common/attention';
import { actorName, reason, type PerAttemptBudget } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import { settingsRow, type SettingsRow } from '../db/settings-row';
import type { Inbox } from '../inbox';
import { NANO, type Spend, type SpendSource } from './spend';
import type { UsageTotals } from '../../common/logs';
import type { Needed } from '../wiring';
import { prepareBudgetStatements } from './store';
import { SpendWindows } from './windows';

const KEY = 'budgets';

/** One attempt's spend as the report that just came knows it (the ledger's running total). */
interface KnownSpend {
  attempt: number;
  spend: Spend;
}
const CACHE_MS = 1000;
/**
 * The machine's zone is read at most this often (monotonic): each read builds an
 * Intl.DateTimeFormat, ~0.5 ms of CPU, which was most of a usage report's cost and of a claim's
 * budget check while a daily cap is set.
 */
const ZONE_MS = 60_000;
export const DEFAULT_BUDGETS: BudgetSettings = { globalDailyUsd: null, perRoleDailyUsd: {}, timezone: null, windows: [] };

const putOpts = budgetsInput.extend({ actor: actorName, reason: reason.optional() });

export interface Day {
  zone: string;
  day: string;
  start: number;
  end: number;
}

/** What layer 3 says about spend for a role now: the first cap reached, or none. */
export interface BudgetVerdict {
  ok: boolean;
  reason: string;
  evidence: Record<string, unknown>;
}

function machineZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

const money = (n: number) => `$${n.toFixed(2)}`;

/** A daily cap with its spend so far (nano-dollars, as the ledger keeps them). */
function capStatus(cap: Pick<CapStatus, 'scope' | 'role' | 'capUsd'>, spentNano: number): CapStatus {
  const spentUsd = spentNano / NANO;
  return { scope: cap.scope, role: cap.role, capUsd: cap.capUsd, spentUsd, reached: spentUsd >= cap.capUsd };
}

/** Which cap of one attempt its usage passed (cost first), in words; null within both. */
function overCap(cap: PerAttemptBudget, used: { costUsd: number; tokens: number }): { cost: boolean; words: string } | null {
  if (cap.maxCostUsdPerRun !== undefined && used.costUsd > cap.maxCostUsdPerRun) {
    return { cost: true, words: `${money(used.costUsd)} spent, over its cap of ${money(cap.maxCostUsdPerRun)} per run` };
  }
  if (cap.maxTokensPerRun !== undefined && used.tokens > cap.maxTokensPerRun) {
    return { cost: false, words: `${used.tokens} tokens used, over its cap of ${cap.maxTokensPerRun} per run` };
  }
  return null;
}

/** How a cap takes work away (invariants 6 and 7): each is false when there was nothing to take. */
export interface BudgetHolds {
  /** Takes a run's attempt away and holds it: the jobs module's `holdForBudget`, built after the budgets (core/wiring.ts). */
  run: Needed<(runId: string, message: string) => boolean>;
  /** Takes a task's lock away and blocks it, inside a write: the task board's `ClaimLocks.takeForBudgetTx`. */
  task: (taskId: number, note: string, detail: Record<string, unknown>) => boolean;
}

export class Budgets {
  private readonly q;
  private readonly row: SettingsRow<BudgetSettings>;
  /** Today's caps as last computed, and the spend of each in nano-dollars (exact, so increments add up). */
  private cache: { at: number; day: Day; caps: CapStatus[]; nano: number[] } | null = null;
  private raiseScheduled = false;
  /** Rolling spend windows (PROTOCOL §14), gating like the daily caps. */
  readonly windows: SpendWindows;
  /** The machine's zone as last read (ZONE_MS), and the day `dayOf` last computed (reused while an instant falls in it). */
  private zone: { at: number; name: string } | null = null;
  private lastDay: Day | null = null;
  /**
   * The settings row as the claim path reads it (invariant 3): parsed once and kept while the
   * store's epoch holds (no rollback, no other writer since), dropped by `put`. Every claim asks
   * twice (the daily caps, then the windows); reading and parsing the row each time was most of
   * the claim gate's cost (issue 32).
   */
  private hot: { epoch: number; settings: BudgetSettings; windows: { windows: SpendWindow[]; readonly zone: string } } | undefined;

  constructor(
    private readonly ctx: CoreContext,
    private readonly spend: SpendSource,
    private readonly inbox: Pick<Inbox, 'raise' | 'resolve'>,
    private readonly holds: BudgetHolds,
  ) {
    this.row = settingsRow(ctx.db, KEY);
    this.windows = new SpendWindows(ctx, spend, inbox, () => this.hotSettings().windows);
    this.q = prepareBudgetStatements(ctx.db);
  }

  settings(): BudgetSettings {
    const stored = this.row.read();
    return stored ? { ...DEFAULT_BUDGETS, ...stored } : { ...DEFAULT_BUDGETS, perRoleDailyUsd: {} };
  }

  /** `settings()` as the claim path reads it: kept within one store epoch (see `hot`). Never mutate it. */
  private hotSettings(): NonNullable<Budgets['hot']> {
    const epoch = this.ctx.store.epoch;
    let h = this.hot;
    if (h === undefined || h.epoch !== epoch) {
      const settings = this.settings();
      const zone = () => settings.timezone ?? this.machineZone();
      // Lazy: most claims have no spend window to place, and the zone is read at most once a minute.
      h = this.hot = { epoch, settings, windows: { windows: settings.windows ?? [], get zone() { return zone(); } } };
    }
    return h;
  }

  /** The day `at` falls in, in the operator's zone (invariant 1). */
  dayOf(at: number, s: BudgetSettings = this.settings()): Day {
    const zone = s.timezone ?? this.machineZone();
    const last = this.lastDay;
    // The same zone and an instant inside the day computed last: that day (its bounds are exact).
    if (last && last.zone === zone && at >= last.start && at < last.end) return last;
    const t = DateTime.fromMillis(at, { zone }).startOf('day');
    return (this.lastDay = { zone, day: t.toISODate()!, start: t.toMillis(), end: t.plus({ days: 1 }).toMillis() });
  }

  /** The machine's zone, read afresh every ZONE_MS. */
  private machineZone(): string {
    const mono = this.ctx.clock.monotonic();
    if (!this.zone || mono - this.zone.at >= ZONE_MS) this.zone = { at: mono, name: machineZone() };
    return this.zone.name;
  }

  put(input: unknown): BudgetsView {
    const { globalDailyUsd, perRoleDailyUsd, timezone, windows, actor, reason: why } = parseOrThrow(putOpts, input, 'budgets');
    this.ctx.store.write(() => {
      const before = this.settings();
      const roles = { ...before.perRoleDailyUsd };
      for (const [role, v] of Object.entries(perRoleDailyUsd ?? {})) {
        if (v === null) delete roles[role];
        else roles[role] = v;
      }
      const next: BudgetSettings = {
        globalDailyUsd: globalDailyUsd === undefined ? before.globalDailyUsd : globalDailyUsd,
        perRoleDailyUsd: roles,
        timezone: timezone === undefined ? before.timezone : timezone,
        windows: windows === undefined ? (before.windows ?? []) : windows,
      };
      this.row.write(next);
      this.hot = undefined;
      this.ctx.audit.append({ type: 'budgets.update', actor, subject: 'settings:budgets', detail: { ...(why ? { reason: why } : {}), from: before, to: next } });
      this.ctx.store.emit({ type: 'budgets.changed', settings: next, actor });
    });
    this.cache = null;
    this.hot = undefined;
    this.windows.invalidate();
    return this.view();
  }

  /** Today's caps with spend so far, and when they reset. */
  view(now: number = this.ctx.clock.now()): BudgetsView {
    const s = this.settings();
    const d = this.dayOf(now, s);
    return { settings: s, zone: d.zone, day: d.day, resetsAt: new Date(d.end).toISOString(), measured: this.spend.measured, caps: this.compute(s, d).caps, windows: this.windows.status(now) };
  }

  /** Today's caps, read from the ledger. */
  private compute(s: BudgetSettings, d: Day): { caps: CapStatus[]; nano: number[] } {
    const caps: CapStatus[] = [];
    const nano: number[] = [];
    if (s.globalDailyUsd !== null) {
      const spent = this.spend.nanoBetween(d.start, d.end);
      caps.push(capStatus({ scope: 'global', role: null, capUsd: s.globalDailyUsd }, spent));
      nano.push(spent);
    }
    for (const [role, cap] of Object.entries(s.perRoleDailyUsd).sort(([a], [b]) => (a < b ? -1 : 1))) {
      const spent = this.spend.nanoBetween(d.start, d.end, role);
      caps.push(capStatus({ scope: 'role', role, capUsd: cap }, spent));
      nano.push(spent);
    }
    return { caps, nano };
  }

  /** Today's caps, cached (invariant 3). */
  private current(now: number): { day: Day; caps: CapStatus[] } | null {
    const s = this.hotSettings().settings;
    if (s.globalDailyUsd === null && Object.keys(s.perRoleDailyUsd).length === 0) return null;
    const d = this.dayOf(now, s);
    const mono = this.ctx.clock.monotonic();
    if (!this.cache || this.cache.day.day !== d.day || mono - this.cache.at >= CACHE_MS) {
      const { caps, nano } = this.compute(s, d);
      const newlyReached = caps.some((c) => c.reached && !this.cache?.caps.some((o) => o.scope === c.scope && o.role === c.role && o.reached));
      this.cache = { at: mono, day: d, caps, nano };
      if (newlyReached) this.raiseSoon();
    }
    return { day: d, caps: this.cache.caps };
  }

  /**
   * Invariant 3: a usage report of `role` (`nano` nano-dollars, recorded at `at`) is added to the
   * cached spend of the caps covering it. A cache of another day, or none, is left alone: the next
   * read computes from the ledger, which holds the report already (the caller's transaction).
   */
  private noteSpend(role: string, nano: number, at: number): void {
    const c = this.cache;
    if (!c || nano === 0 || at < c.day.start || at >= c.day.end) return;
    let newlyReached = false;
    c.caps = c.caps.map((cap, i) => {
      if (cap.scope === 'role' && cap.role !== role) return cap;
      c.nano[i]! += nano;
      const next = capStatus(cap, c.nano[i]!);
      newlyReached ||= next.reached && !cap.reached;
      return next;
    });
    if (newlyReached) this.raiseSoon();
  }

  /** The first cap reached that covers `role` (the global one, then the role's), if any. */
  private reachedFor(role: string, now: number): { day: Day; cap: CapStatus } | null {
    const cur = this.current(now);
    if (!cur) return null;
    const cap = cur.caps.find((c) => c.reached && (c.scope === 'global' || c.role === role));
    return cap ? { day: cur.day, cap } : null;
  }

  /** The claim gate (invariant 2): true while a cap covering `role` is reached. */
  roleBlocked(role: string): boolean {
    const now = this.ctx.clock.now();
    return this.reachedFor(role, now) !== null || this.windows.reachedFor(role, now) !== null;
  }

  /** Layer 3's budget verdict for a job of `role` (invariant 2). */
  verdict(role: string, now: number): BudgetVerdict {
    const day = this.dayVerdict(role, now);
    if (!day.ok) return day;
    // PROTOCOL §14: a used-up spend window gates like a daily cap, named with the time it frees.
    const w = this.windows.reachedFor(role, now);
    return w ? { ok: false, reason: this.windows.words(w), evidence: { ...day.evidence, window: w } } : day;
  }

  private dayVerdict(role: string, now: number): BudgetVerdict {
    const cur = this.current(now);
    if (!cur) return { ok: true, reason: 'no daily spend cap is set', evidence: {} };
    const hit = cur.caps.find((c) => c.reached && (c.scope === 'global' || c.role === role));
    const resets = new Date(cur.day.end).toISOString();
    const relevant = cur.caps.filter((c) => c.scope === 'global' || c.role === role);
    const evidence = { day: cur.day.day, zone: cur.day.zone, resetsAt: resets, caps: relevant };
    if (!hit) {
      const words = relevant.map((c) => `${c.scope === 'global' ? 'global' : `role ${c.role}`} ${money(c.spentUsd)} of ${money(c.capUsd)}`).join(', ');
      return { ok: true, reason: relevant.length ? `spend today within its caps (${words})` : 'no daily spend cap covers this role', evidence };
    }
    const what = hit.scope === 'global' ? 'the global daily spend cap' : `the daily spend cap of role ${hit.role}`;
    return { ok: false, reason: `${what} is reached: ${money(hit.spentUsd)} spent of ${money(hit.capUsd)} on ${cur.day.day} (${cur.day.zone}); it resets at midnight, ${resets}`, evidence };
  }

  private raiseSoon(): void {
    if (this.raiseScheduled) return;
    this.raiseScheduled = true;
    this.ctx.clock.afterIo(() => {
      this.raiseScheduled = false;
      if (this.ctx.db.open) this.raiseReached(); // the core may have closed meanwhile
    });
  }

  /** One inbox item per cap reached per day (invariant 4); also run by the inbox's sweep. */
  raiseReached(now: number = this.ctx.clock.now()): void {
    this.windows.raiseAndResolve(now);
    const cur = this.current(now);
    if (!cur) return;
    const resets = new Date(cur.day.end).toISOString();
    for (const c of cur.caps) {
      if (!c.reached) continue;
      const scope = c.scope === 'global' ? 'global' : `role:${c.role}`;
      const what = c.scope === 'global' ? 'Global daily spend cap' : `Daily spend cap of role ${c.role}`;
      this.inbox.raise({
        key: `cap:${scope}:${cur.day.day}`,
        kind: 'budget',
        subject: `budget:${scope}`,
        about: { scope, role: c.role },
        entry: {
          title: `${what} reached: ${money(c.spentUsd)} of ${money(c.capUsd)}`,
          detail: `Nothing of ${c.scope === 'global' ? 'any role' : `role ${c.role}`} is dispatched or handed out until the cap resets at midnight (${cur.day.zone}), ${resets}, or you raise it.`,
          day: cur.day.day,
          spentUsd: c.spentUsd,
          capUsd: c.capUsd,
        },
      });
    }
  }

  /**
   * A usage report was just added for `subject` (`run:<id>` / `task:<id>`), in the caller's
   * transaction (core/logs, inside its group commit): a daily cap it reached gates the next claim
   * and dispatch from now on (invariant 3; its item is raised after the burst), and an attempt it
   * put past its own cap is taken away in this same transaction (invariants 6 and 7), before any
   * request sent behind the report is applied.
   */
  usageRecorded(u: { subject: string; role: string; costNusd: number; tokens?: number; at: number; attempt?: number; attemptTotals?: UsageTotals }): void {
    this.noteSpend(u.role, u.costNusd, u.at);
    if (this.windows.noteSpend(u.role, u.costNusd, u.tokens ?? 0, u.at)) this.raiseSoon();
    // A cache too old to take the report is read afresh now (at most once per CACHE_MS), so a cap
    // reached is noticed at once, not at the next claim.
    this.current(this.ctx.clock.now());
    // The attempt's totals come with the report (the ledger's running total): no sum over its rows per frame.
    const known = u.attempt !== undefined && u.attemptTotals ? { attempt: u.attempt, spend: { costUsd: u.attemptTotals.costUsd, tokens: u.attemptTotals.inputTokens + u.attemptTotals.outputTokens } } : undefined;
    if (u.subject.startsWith('run:')) this.enforceRunCaps(u.subject.slice('run:'.length), known);
    else if (u.subject.startsWith('task:')) this.enforceTaskCaps(Number(u.subject.slice('task:'.length)), known);
  }

  /** Invariant 7: the tasks held now past their cap (one, or all) are taken away and blocked. Returns how many. */
  enforceTaskCaps(taskId?: number, known?: KnownSpend): number {
    if (!this.spend.measured) return 0;
    let taken = 0;
    for (const t of this.q.cappedTasks.all(taskId ?? null, taskId ?? null)) {
      const cap = { ...(t.max_cost_usd !== null ? { maxCostUsdPerRun: t.max_cost_usd } : {}), ...(t.max_tokens !== null ? { maxTokensPerRun: t.max_tokens } : {}) };
      const used = known?.attempt === t.attempt ? known.spend : this.spend.ofAttempt(`task:${t.id}`, t.attempt);
      const what = overCap(cap, used);
      if (!what) continue;
      const note = `spend cap passed: ${what.words}; the lock was taken away and the task is blocked for you`;
      const took = this.ctx.store.write(() => {
        if (!this.holds.task(t.id, note, { attempt: t.attempt, costUsd: used.costUsd, tokens: used.tokens, ...cap })) return false;
        this.q.markStopped.run(t.attempt, t.id);
        return true;
      });
      if (!took) continue;
      taken++;
      this.inbox.raise({
        key: `taskcap:${t.id}:${t.attempt}`,
        kind: 'budget',
        subject: `task:${t.id}`,
        about: { taskId: t.id, title: t.title, role: t.role },
        entry: {
          title: `Task ${t.title} stopped: ${what.cost ? 'cost' : 'token'} cap per attempt passed`,
          detail: `${what.words}. Unblock it to run it again (with a fresh cap), or cancel it.`,
          attempt: t.attempt,
          costUsd: used.costUsd,
          tokens: used.tokens,
          ...cap,
        },
      });
    }
    return taken;
  }

  /**
   * Invariant 6: the attempts in flight past their run's cap (of one run, or of all) are taken away
   * and held. Called for each usage report once it is recorded, and by the inbox's sweep. Returns
   * how many were taken.
   */
  enforceRunCaps(runId?: string, known?: KnownSpend): number {
    if (!this.spend.measured) return 0;
    let taken = 0;
    for (const r of runId === undefined ? this.q.capped.all() : this.q.cappedRun.all(runId)) {
      const cap = JSON.parse(r.budget) as PerAttemptBudget;
      const used = known?.attempt === r.attempt ? known.spend : this.spend.ofAttempt(`run:${r.id}`, r.attempt);
      const over = overCap(cap, used);
      if (!over) continue;
      const what = over.words;
      const message = `spend cap passed: ${what}; the attempt was stopped and the run is held for you`;
      if (!this.holds.run.get()(r.id, message)) continue;
      taken++;
      this.inbox.raise({
        key: `runcap:${r.id}:${r.attempt}`,
        kind: 'budget',
        subject: `run:${r.id}`,
        about: { runId: r.id, jobId: r.job_id, job: r.job_name, slot: r.slot },
        entry: {
          title: `${r.job_name} ${r.slot} stopped: ${over.cost ? 'cost' : 'token'} cap per run passed`,
          detail: `${what}. Approve to run it again (with a fresh cap), or reject it.`,
          attempt: r.attempt,
          costUsd: used.costUsd,
          tokens: used.tokens,
          ...cap,
        },
      });
    }
    return taken;
  }
}
