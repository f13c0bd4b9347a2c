/**
 * Answers for the operator (SPEC §7, §8): "why didn't it run?", "will it run?", the next slots, the
 * slot ledger, and what a downtime would do. Read-only: nothing here writes or reads the network.
 *
 * Invariants:
 * 1. Past instants are answered from recorded facts (run row, `checks`, backfills, audit trail);
 *    future instants are a forecast computed with the same functions the runner uses (plan.ts).
 * 2. A forecast never runs a check that calls out (http, command, agent): it says when the check will
 *    run, and shows the current value only for signals and files.
 */
import fs from 'node:fs';
import type {
  Backfill,
  DowntimeItem,
  DowntimeSimulation,
  Explanation,
  JobSettings,
  JobSpec,
  LayerItem,
  LayerVerdict,
  LedgerEntry,
  LedgerResult,
  PreviewItem,
  PreviewResult,
  Run,
} from '../../common/job-schema';
import { preconditionLabel } from '../../common/job-schema';
import { isoTime } from '../../common/iso-time';
import type { Signals } from '../signals';
import type { BackfillRepo } from './backfill-repo';
import type { CalendarRepo } from './calendar-repo';
import { instanceWords, maintenanceAt } from './engine';
import { resolvePlaceholders, slotDates, type JobPlan } from './plan';
import type { JobRepo } from './repo';
import { isInProgress, runPhase } from './run-phase';
import { specOf, toBackfill, toJob, toRun, type JobRow, type RunRow } from './rows';
import { nextSlots, slotAt, type SlotOccurrence } from './schedule';
import { ONE_BY_ONE, walkSlots } from './slot-walk';
import { resolveLocalDate } from './time-util';

/** Slots a downtime simulation looks at, at most (a range of them counts as the entries scanned). */
const SIMULATED_ENTRIES = 20_000;

export interface InsightDeps {
  repo: JobRepo;
  backfillRows: BackfillRepo;
  calendars: CalendarRepo;
  signals: Signals;
  settings(): JobSettings;
  /** Online instances of `role`: those that take job runs, and those whose hello said they take none. */
  online(role: string): { takers: number; noRuns: number };
  /** The oldest audit rows about any of `subjects` (the run's trail). */
  trail(subjects: string[], limit: number): Array<{ id: number; at: number; type: string; actor: string; detail: string }>;
}

/** `following`: the entry after `o` when the caller has it (saves a slot search per item). */
export function previewItem(plan: JobPlan, o: SlotOccurrence, following?: SlotOccurrence): PreviewItem {
  const w = plan.windowOf(o, following);
  const item: PreviewItem = { slot: o.slot, at: isoTime(o.at), local: o.local, disposition: o.disposition, opensAt: isoTime(w.opensAt), closesAt: isoTime(w.closesAt) };
  if (o.dayType) item.dayType = o.dayType;
  if (o.movedFrom) item.movedFrom = o.movedFrom;
  if (o.shifted) item.shifted = o.shifted;
  return item;
}

export function preview(plan: JobPlan, after: number, count: number): Pick<PreviewResult, 'items' | 'truncated' | 'next'> {
  // `count` due entries; skipped ones in between are included (the editor shows them).
  const u = plan.upcoming(after, count, Math.max(count * 4, count + 50));
  return { items: u.entries.map((o, k) => previewItem(plan, o, u.entries[k + 1])), truncated: u.truncated, next: u.next === null ? null : isoTime(u.next) };
}

function layerOf(items: LayerItem[], empty: string): LayerVerdict {
  if (items.length === 0) return { verdict: 'ready', reason: empty, items };
  const bad = items.find((i) => i.verdict === 'error') ?? items.find((i) => i.verdict === 'not_ready') ?? items.find((i) => i.verdict === 'unknown') ?? items.find((i) => i.verdict === 'will_check');
  if (!bad) return { verdict: 'ready', reason: items.map((i) => i.reason).join('; '), items };
  return { verdict: bad.verdict, reason: `${bad.name}: ${bad.reason}`, items };
}

const OUTCOME_WORDS: Record<string, string> = {
  ran: 'ran successfully',
  backfilled: 'was backfilled successfully',
  skipped_calendar: 'did not run: not a workday in the job calendar',
  skipped_dst: 'did not run: its local time did not exist (DST) and dstGapPolicy is skip',
  skipped_overlap: 'did not run: the previous run was still in progress (overlap policy)',
  skipped_not_ready: 'did not run: preconditions were not ready when the window closed',
  skipped_paused: 'did not run: the job was paused',
  skipped_kill_switch: 'did not run: the kill switch was on',
  skipped_disabled: 'did not run: the job was disabled',
  skipped_maintenance: 'did not run: a maintenance window covered the rest of the window',
  skipped_quota: 'did not run: the concurrency quota stayed full',
  skipped_budget: 'did not run: a daily spend cap stayed reached',
  missed: 'did not run: the window passed while Gaffer could not act on it',
  folded: 'did not run on its own: folded into a later run',
  failed: 'ran and failed',
  held: 'ran and failed; held for review',
  rejected: 'ran and failed; held for review, and the operator rejected it',
  waiting: 'is waiting (window open, being checked)',
  dispatched: 'has been triggered; waiting for the agent to start',
  running: 'is running',
  verifying: 'reported success; Gaffer is checking the work',
  retry_scheduled: 'failed an attempt; a retry is scheduled',
};

export function explain(deps: InsightDeps, job: JobRow, at: number, now: number): Explanation {
  const { repo } = deps;
  const spec = specOf(job);
  const plan = repo.planOf(job, spec);
  const settings = deps.settings();
  const { current, next } = slotAt(plan.slotSpec, at);
  // The slot's own row, or the range row its slot is one of (the older slots of a long gap).
  let run: RunRow | undefined = current ? (repo.runBySlot(job.id, current.slot) ?? repo.rangeCovering(job.id, current.at)) : undefined;
  if (!run) {
    const r = repo.latestRunAtOrBefore(job.id, at);
    if (r && (!current || r.slot_at >= current.at)) run = r;
  }
  const w = current ? plan.windowOf(current) : null;
  const slot = current && w
    ? { ...previewItem(plan, current), window: { opensAt: isoTime(w.opensAt), closesAt: isoTime(w.closesAt), latestStart: isoTime(w.latestStart) } }
    : null;
  const base = {
    jobId: job.id,
    job: job.name,
    version: job.version,
    at: isoTime(at),
    now: isoTime(now),
    slot,
    nextSlot: next ? previewItem(plan, next) : null,
    jobState: { enabled: job.enabled === 1, paused: toJob(job).paused, killSwitch: settings.killSwitch },
  };
  if (run) return { ...base, ...recorded(deps, job, spec, run, current ?? undefined) };
  if (!current) {
    const empty: LayerVerdict = { verdict: 'unknown', reason: 'no slot', items: [] };
    return {
      ...base,
      tense: at > now ? 'future' : 'past',
      outcome: 'no slot',
      summary: `the schedule has no slot at or before ${isoTime(at)}${next ? `; the next is ${next.slot} at ${isoTime(next.at)}` : ''}`,
      layers: { time: { ...empty, reason: 'no slot of this job falls at or before the instant' }, preconditions: empty, execution: empty },
      run: null,
      steps: [],
      backfills: [],
      trail: [],
    };
  }
  return { ...base, ...forecast(deps, job, spec, plan, current, w!, settings, now) };
}

function recorded(deps: InsightDeps, job: JobRow, spec: JobSpec, r: RunRow, asked?: SlotOccurrence): Pick<Explanation, 'tense' | 'outcome' | 'summary' | 'layers' | 'run' | 'steps' | 'backfills' | 'trail'> {
  const { repo } = deps;
  const run = toRun(r);
  const checks = repo.checks(job.id, r.slot);
  const timeC = checks.find((c) => c.name === 'time');
  const time: LayerVerdict = timeC
    ? { verdict: timeC.verdict, reason: timeC.reason, items: [{ name: 'time', verdict: timeC.verdict, reason: timeC.reason, evidence: timeC.evidence, at: timeC.at, firstAt: timeC.firstAt, count: timeC.count, changedAt: timeC.changedAt }] }
    : { verdict: 'ready', reason: `slot ${r.slot} was claimed ${run.trigger === 'manual' ? 'by hand' : 'by the runner'} at ${run.createdAt}`, items: [] };
  const preItems: LayerItem[] = checks
    .filter((c) => c.layer === 'precondition')
    .map((c) => ({ name: c.name, verdict: c.verdict, reason: c.reason, evidence: c.evidence, at: c.at, firstAt: c.firstAt, count: c.count, changedAt: c.changedAt }));
  spec.preconditions.forEach((p, i) => {
    const name = preconditionLabel(p, i);
    if (!preItems.some((x) => x.name === name)) preItems.push({ name, verdict: 'unknown', reason: run.trigger === 'manual' ? 'not evaluated: run by hand (operator override)' : 'not evaluated for this slot (an earlier layer stopped it, or it was configured later)' });
  });
  // In the order they are configured (checks removed from the job since come last).
  const order = spec.preconditions.map((p, i) => preconditionLabel(p, i));
  const rank = (n: string) => (order.indexOf(n) < 0 ? order.length : order.indexOf(n));
  preItems.sort((a, b) => rank(a.name) - rank(b.name));
  const execC = checks.find((c) => c.name === 'execution');
  const execItems: LayerItem[] = [];
  if (execC) {
    for (const [name, v] of Object.entries(execC.evidence as Record<string, unknown>)) {
      if (name === 'blocker' || v === null || typeof v !== 'object') continue;
      const x = v as { verdict?: string; reason?: string };
      execItems.push({ name, verdict: (x.verdict as LayerItem['verdict']) ?? 'unknown', reason: x.reason ?? '', evidence: v, at: execC.at });
    }
  }
  const execution: LayerVerdict = execC
    ? { verdict: execC.verdict, reason: execC.reason, items: execItems }
    : { verdict: 'unknown', reason: 'execution conditions were not evaluated for this slot', items: [] };
  const backfills = deps.backfillRows.ofRun(r.id).map((b) => toBackfill(b, job.name));
  const subjects = [`run:${r.id}`, ...backfills.map((b) => `backfill:${b.id}`)];
  const trail = deps.trail(subjects, 100).map((e) => ({ id: e.id, at: isoTime(e.at), type: e.type, actor: e.actor, detail: JSON.parse(e.detail) as unknown }));
  const words = OUTCOME_WORDS[run.disposition] ?? run.disposition;
  const parts = [`slot ${r.slot} ${words}`];
  if (run.range) {
    // One row for many slots: name the slot asked about, and the range it is one of.
    const one = asked && asked.slot !== r.slot ? asked.slot : r.slot;
    parts[0] = `slot ${one} ${words}: one of ${run.range.slots} slots from ${r.slot} to ${run.range.lastSlot} (due ${run.slotAt} … ${run.range.lastAt}) recorded as one row, run ${r.id}`;
  }
  if (run.status === 'success') parts.push(`(attempt ${run.attempt}${run.retryCount ? ` after ${run.retryCount} retr${run.retryCount === 1 ? 'y' : 'ies'}` : ''}, finished ${run.finishedAt})`);
  if (run.lastError && run.status !== 'success') parts.push(`— ${run.lastError}`);
  if (run.coveredBy) parts.push(`(covered by run ${run.coveredBy})`);
  const open = backfills.find((b) => b.status === 'queued' || b.status === 'held' || b.status === 'dispatched');
  if (open) parts.push(`; backfill #${open.id} is ${open.status}`);
  const blockers = [preItems.find((i) => i.verdict === 'not_ready' || i.verdict === 'error'), execution.verdict !== 'ready' ? { name: 'execution', reason: execution.reason } : undefined].filter(Boolean) as Array<{ name: string; reason: string }>;
  const summary = [
    `time: ${time.reason}`,
    preItems.length ? `preconditions: ${preItems.map((i) => `${i.name} ${i.verdict}${i.count ? ` (checked ${i.count}×, last ${i.at})` : ''}: ${i.reason}`).join('; ')}` : 'preconditions: none configured',
    `execution: ${execution.reason}`,
    ...(blockers.length && run.status !== 'success' ? [`last blocker: ${blockers.map((b) => `${b.name}: ${b.reason}`).join('; ')}`] : []),
  ].join('\n');
  return {
    tense: 'past',
    outcome: parts.join(' '),
    summary,
    layers: { time, preconditions: layerOf(preItems, 'no preconditions configured'), execution },
    run,
    steps: repo.steps(r.id),
    backfills,
    trail,
  };
}

function forecast(
  deps: InsightDeps,
  job: JobRow,
  spec: JobSpec,
  plan: JobPlan,
  occ: SlotOccurrence,
  w: ReturnType<JobPlan['windowOf']>,
  settings: JobSettings,
  now: number,
): Pick<Explanation, 'tense' | 'outcome' | 'summary' | 'layers' | 'run' | 'steps' | 'backfills' | 'trail'> {
  const { repo } = deps;
  const past = occ.at <= now;
  const cal = spec.calendar ? deps.calendars.get(spec.calendar) : undefined;
  const dayWords = occ.dayType ? ` (${occ.local.slice(0, 10)} is a ${occ.dayType.replace('_', ' ')}${cal ? ` in calendar ${cal.id}` : ''})` : '';
  const winWords = `window ${isoTime(w.opensAt)} – ${isoTime(w.closesAt)}${w.latestStart > w.closesAt ? ` (+ tolerance until ${isoTime(w.latestStart)})` : ''}`;
  const timeItem: LayerItem = {
    name: 'time',
    verdict: occ.disposition === 'due' ? 'ready' : 'not_ready',
    reason:
      occ.disposition === 'calendar_skip'
        ? `slot ${occ.slot} falls on a non-workday${dayWords}; calendarPolicy skip`
        : occ.disposition === 'dst_skip'
          ? `local time ${occ.local} does not exist (DST gap) and dstGapPolicy is skip`
          : `slot ${occ.slot} due ${occ.local} ${plan.zone}${dayWords}${occ.movedFrom ? `, moved from ${occ.movedFrom}` : ''}${occ.shifted ? ', shifted past a DST gap' : ''}; ${winWords}`,
    evidence: { slot: occ.slot, dueAt: isoTime(occ.at), local: occ.local, zone: plan.zone, dayType: occ.dayType ?? null, calendar: cal ? { id: cal.id, version: cal.version } : null, movedFrom: occ.movedFrom ?? null, shifted: occ.shifted ?? null, window: { opensAt: isoTime(w.opensAt), closesAt: isoTime(w.closesAt), latestStart: isoTime(w.latestStart) } },
  };
  const recheckS = Math.round(plan.recheckMs(occ.at) / 1000);
  const preItems: LayerItem[] = spec.preconditions.map((p, i) => {
    const name = preconditionLabel(p, i);
    const when = `will be checked from ${isoTime(w.opensAt)} every ${recheckS} s until ${isoTime(w.latestStart)}`;
    try {
      if (p.kind === 'signal') {
        const key = resolvePlaceholders(p.key ?? '{date}', occ.slot).text;
        const s = deps.signals.get(p.name, key);
        return { name, verdict: 'will_check', reason: `${when}; signal ${p.name} for ${key} is ${s ? `set now (at ${s.setAt} by ${s.actor})` : 'not set now'}`, evidence: { signal: p.name, key, setNow: !!s, businessDate: slotDates(occ.slot).date } };
      }
      if (p.kind === 'file') {
        const path = resolvePlaceholders(p.path, occ.slot).text;
        let st: fs.Stats | undefined;
        try {
          st = fs.statSync(path);
        } catch {
          st = undefined;
        }
        const after = p.check === 'modified_after' ? (p.after === 'slot' ? occ.at : resolveLocalDate(plan.zone, p.after === 'yesterday' ? slotDates(occ.slot).yesterday : slotDates(occ.slot).date)) : undefined;
        return {
          name,
          verdict: 'will_check',
          reason: `${when}; ${path} ${st ? `exists now (modified ${isoTime(st.mtimeMs)})` : 'does not exist now'}${after !== undefined ? `; must be modified after ${isoTime(after)}` : ''}`,
          evidence: { path, existsNow: !!st, mtimeNow: st ? isoTime(st.mtimeMs) : null, modifiedAfter: after !== undefined ? isoTime(after) : null },
        };
      }
      const target = p.kind === 'http' ? `GET ${resolvePlaceholders(p.url, occ.slot).text}` : p.kind === 'command' ? p.argv.map((a) => resolvePlaceholders(a, occ.slot).text).join(' ') : `precheck ${p.check} by role ${p.role ?? job.role}`;
      return { name, verdict: 'will_check', reason: `${when}; ${target} (not evaluated ahead of time)`, evidence: { target } };
    } catch (e) {
      return { name, verdict: 'error', reason: (e as Error).message };
    }
  });
  const execItems: LayerItem[] = [];
  const push = (name: string, ok: boolean, reason: string, evidence?: unknown) => execItems.push({ name, verdict: ok ? 'ready' : 'not_ready', reason, ...(evidence !== undefined ? { evidence } : {}) });
  push('killSwitch', !settings.killSwitch.on, settings.killSwitch.on ? `the kill switch is on now (by ${settings.killSwitch.by} at ${settings.killSwitch.at}: ${settings.killSwitch.reason}); nothing is dispatched while it stays on` : 'the kill switch is off now', settings.killSwitch);
  const paused = toJob(job).paused;
  const resumes = paused?.until ? ` (it resumes by itself at ${paused.until})` : '';
  push(
    'pause',
    !paused,
    paused ? `the ${paused.role ? `role ${job.role}` : 'job'} is paused now (by ${paused.by} at ${paused.at}: ${paused.reason})${resumes}; unless resumed before ${isoTime(w.latestStart)} the slot is skipped` : 'the job is not paused now',
    paused,
  );
  push('enabled', job.enabled === 1, job.enabled === 1 ? 'the job is enabled' : 'the job is disabled: the runner does not look at its slots');
  const mw = maintenanceAt(spec, w.opensAt);
  push('maintenance', mw === null, mw ? `the window opens inside maintenance window ${mw.label}; dispatch waits until ${isoTime(mw.until)}` : 'no maintenance window at the window opening');
  const max = spec.executionConditions.maxConcurrentPerRole;
  if (max !== undefined) {
    const n = repo.inFlightCountOfRole(job.role);
    push('quotaRole', true, `role quota ${max}; ${n} in flight now (checked again at dispatch)`);
  }
  if (settings.globalConcurrency !== null) {
    const n = repo.inFlightCount();
    push('quotaGlobal', true, `global quota ${settings.globalConcurrency}; ${n} in flight now (checked again at dispatch)`);
  }
  const open = repo.openRunsOfJob(job.id).filter((r) => isInProgress(runPhase(r)));
  push('overlap', true, open.length ? `run(s) of ${open.map((r) => r.slot).join(', ')} in progress now; overlap '${spec.overlap}' applies if still running then` : `no run in progress now; overlap '${spec.overlap}'`);
  const queued = deps.backfillRows.queuedOfJob(job.id, spec.backfillCapPerTick);
  push('order', true, queued.length ? `backfills of ${queued.map((b) => b.slot).join(', ')} would run first (cap ${spec.backfillCapPerTick} per tick)` : 'no queued backfill runs first');
  const online = deps.online(job.role);
  push('instance', true, `${instanceWords(job.role, online.takers, online.noRuns)} now`);

  let outcome: string;
  if (occ.disposition !== 'due') outcome = `will not run: ${timeItem.reason}`;
  else if (job.enabled !== 1) outcome = 'will not run: the job is disabled';
  else if (settings.killSwitch.on) outcome = `will be skipped unless the kill switch is turned off before ${isoTime(w.latestStart)}`;
  else if (paused) outcome = `will be skipped unless the job is resumed before ${isoTime(w.latestStart)} (paused by ${paused.by}: ${paused.reason})`;
  else if (spec.preconditions.length) outcome = `will be checked at ${isoTime(w.opensAt)} and run as soon as its preconditions pass (until ${isoTime(w.latestStart)})`;
  else outcome = `will run at ${isoTime(w.opensAt)}`;
  if (past && occ.disposition === 'due') outcome = `no run was recorded for slot ${occ.slot} (due ${isoTime(occ.at)}): ${job.created_at > occ.at ? 'the job did not exist yet' : job.enabled !== 1 ? 'the job is disabled' : 'the runner has not reached it (Gaffer not running, or the slot was skipped while the job was disabled)'}`;
  const time: LayerVerdict = { verdict: timeItem.verdict, reason: timeItem.reason, items: [timeItem] };
  const execution = layerOf(execItems, 'no execution conditions');
  const summary = [`time: ${time.reason}`, preItems.length ? `preconditions: ${preItems.map((i) => `${i.name}: ${i.reason}`).join('; ')}` : 'preconditions: none configured', `execution: ${execItems.filter((i) => i.verdict !== 'ready').map((i) => i.reason).join('; ') || 'nothing blocks it now'}`].join('\n');
  return {
    tense: past ? 'past' : 'future',
    outcome,
    summary,
    layers: { time, preconditions: layerOf(preItems, 'no preconditions configured'), execution },
    run: null,
    steps: [],
    backfills: [],
    trail: [],
  };
}

export function ledger(deps: InsightDeps, job: JobRow, from: number, to: number, limit: number, now: number): LedgerResult {
  const { repo } = deps;
  const plan = repo.planOf(job);
  const expected = plan.slotsLimited(from, to, limit + 1).entries;
  // Only the first `limit` + 1 items can be shown: of the runs too (a frequent job has many).
  const runs = repo.runsInRange(job.id, from, to, limit + 1);
  const ranges = repo.rangesOverlapping(job.id, from, to);
  const bySlot = new Map<string, LedgerEntry>();
  // Every change of `enabled` stamps `updated_at`: a job disabled now and unchanged since a slot
  // fell due was disabled then, and the runner skips such slots without writing a run.
  const disabledSince = job.enabled === 1 ? null : job.updated_at;
  const noRun = (at: number): LedgerEntry['disposition'] => (at > now ? 'scheduled' : disabledSince !== null && at >= disabledSince ? 'skipped_disabled' : 'not_evaluated');
  for (const o of expected) {
    bySlot.set(o.slot, {
      slot: o.slot,
      at: isoTime(o.at),
      local: o.local,
      expected: o.disposition,
      // Before the job existed nothing was expected of a slot, whatever the calendar says of its day.
      disposition: o.at < job.created_at ? 'before_job' : o.disposition === 'calendar_skip' ? 'skipped_calendar' : o.disposition === 'dst_skip' ? 'skipped_dst' : noRun(o.at),
      status: null,
      run: null,
      backfills: [],
    });
  }
  // A slot inside a range row (the older slots of a long gap) got the range's decision.
  for (const r of ranges) {
    const run: Run = toRun(r);
    for (const o of expected) if (o.at >= r.slot_at && o.at <= r.range_last_at!) Object.assign(bySlot.get(o.slot)!, { run, status: run.status, disposition: run.disposition });
  }
  for (const r of runs) {
    const run: Run = toRun(r);
    const e = bySlot.get(r.slot);
    if (e) Object.assign(e, { run, status: run.status, disposition: run.disposition });
    else bySlot.set(r.slot, { slot: r.slot, at: run.slotAt, local: null, expected: null, disposition: run.disposition, status: run.status, run, backfills: [] });
  }
  const all = [...bySlot.values()].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.slot < b.slot ? -1 : 1));
  const items = all.slice(0, limit);
  const shown = new Map(items.map((e) => [e.slot, e]));
  const lastAt = items.length ? Date.parse(items[items.length - 1]!.at) + 1 : from;
  for (const b of deps.backfillRows.inRange(job.id, from, Math.min(to, lastAt))) shown.get(b.slot)?.backfills.push(toBackfill(b, job.name) as Backfill);
  const counts: Record<string, number> = {};
  for (const e of items) counts[e.disposition] = (counts[e.disposition] ?? 0) + 1;
  const last = items[items.length - 1];
  return { items, next: all.length > limit && last ? last.at : null, counts };
}

export function simulateDowntime(deps: InsightDeps, job: JobRow, from: number, to: number): DowntimeSimulation {
  const { repo } = deps;
  const spec = specOf(job);
  const plan = repo.planOf(job, spec);
  const settings = deps.settings();
  const stops = { paused: job.paused_at !== null, killSwitch: settings.killSwitch.on };
  // The runner's own walk over the slots it finds at restart (slot-walk.ts): the older slots of a
  // long downtime are one range item per decision, as they are one row each.
  const walk = walkSlots(plan, from, to, { stops, covered: () => false, hasRow: () => false, anyCovered: () => false, maxEntries: SIMULATED_ENTRIES, maxOnes: Infinity });
  const items: DowntimeItem[] = [];
  const queuedFor: DowntimeItem[] = [];
  const folded: DowntimeItem[] = [];
  let newestOpen: DowntimeItem | undefined;
  let slotCount = 0;
  for (const step of walk.steps) {
    if (step.kind === 'covered') continue;
    if (step.kind === 'range') {
      const { first, last, lastW, look, slots } = step;
      const detail = look.kind === 'skip' ? look.reason : look.outcome.backfill ? `${look.why}; beyond the tolerance, not queued for backfill (older than the newest ${ONE_BY_ONE} slots)` : look.outcome.reason;
      const decision: DowntimeItem['decision'] = look.kind === 'skip' ? look.disposition : look.outcome.disposition === 'folded' ? 'folded' : look.outcome.disposition === 'skipped_paused' || look.outcome.disposition === 'skipped_kill_switch' ? look.outcome.disposition : 'skipped_alert';
      const item: DowntimeItem = { slot: first.slot, at: isoTime(first.at), local: first.local, windowClosesAt: isoTime(lastW.latestStart), decision, detail: `${slots} slots from ${first.slot} to ${last.slot}, one row: ${detail}`, range: { slots, lastSlot: last.slot, lastAt: isoTime(last.at) } };
      if (decision === 'folded') folded.push(item);
      items.push(item);
      slotCount += slots;
      continue;
    }
    const { occ: o, w, look } = step;
    if (o.at >= to) continue; // due once Gaffer is back: not part of the downtime
    slotCount++;
    const base = { slot: o.slot, at: isoTime(o.at), local: o.local, windowClosesAt: isoTime(w.latestStart) };
    let item: DowntimeItem;
    if (look.kind === 'skip') item = { ...base, decision: look.disposition, detail: look.reason };
    else if (look.kind === 'open') {
      item = to < w.opensAt
        ? { ...base, decision: 'runs_on_time', detail: `its window opens at ${isoTime(w.opensAt)}, after Gaffer is back` }
        : { ...base, decision: 'runs_late', detail: `starts at restart (${Math.round((to - Math.max(o.at, w.opensAt)) / 60_000)} min late); window open until ${isoTime(w.latestStart)}` };
      newestOpen = item;
    } else {
      const oc = look.outcome;
      if (oc.disposition === 'skipped_paused' || oc.disposition === 'skipped_kill_switch') item = { ...base, decision: oc.disposition, detail: oc.reason };
      else if (oc.disposition === 'folded') {
        item = { ...base, decision: 'folded', detail: oc.reason };
        folded.push(item);
      } else if (oc.backfill) {
        item = { ...base, decision: 'backfill_queued', detail: oc.reason };
        queuedFor.push(item);
      } else item = { ...base, decision: 'skipped_alert', detail: oc.reason };
    }
    items.push(item);
  }
  // Who covers folded slots: the first slot that runs at or after the restart.
  const coverer = items.find((i) => i.decision === 'runs_late' || i.decision === 'runs_on_time') ?? (() => {
    const n = plan.firstAtOrAfter(to);
    return n ? { slot: n.slot } : undefined;
  })();
  for (const f of folded) if (coverer) f.coveredBy = coverer.slot;
  // Backfill ticks: the restart (if a slot opens then), then each later slot opening; cap per tick.
  const cap = spec.backfillCapPerTick;
  const already = deps.backfillRows.queuedOfJob(job.id, 10_000).length;
  if (cap > 0 && queuedFor.length > 0) {
    const ticks: number[] = [];
    if (newestOpen) ticks.push(to);
    for (const n of nextSlots(plan.slotSpec, to, Math.ceil((queuedFor.length + already) / cap) + 2, { maxEntries: 50_000 })) if (n.disposition === 'due') ticks.push(Math.max(n.at, plan.windowOf(n).opensAt));
    let k = already; // existing queued backfills go first (oldest first)
    for (const q of queuedFor) {
      const t = ticks[Math.floor(k / cap)];
      if (t !== undefined) q.backfillAt = isoTime(t);
      k++;
    }
  }
  const runLate = items.filter((i) => i.decision === 'runs_late').length;
  const bfAtRestart = queuedFor.filter((q) => q.backfillAt === isoTime(to)).length;
  const summary = {
    slots: slotCount,
    runLate,
    folded: folded.reduce((n, i) => n + (i.range?.slots ?? 1), 0),
    skipped: items.filter((i) => i.decision.startsWith('skipped')).reduce((n, i) => n + (i.range?.slots ?? 1), 0),
    backfills: queuedFor.length,
    dispatchesAtRestart: runLate + bfAtRestart,
    text: '',
  };
  summary.text =
    `Gaffer off ${isoTime(from)} → ${isoTime(to)}: ${slotCount} slot(s) affected under '${spec.missedWindow}'${walk.done ? '' : ` (the first ${slotCount} only: the simulation stops at ${SIMULATED_ENTRIES} slots)`}` +
    `${runLate ? `; ${runLate} start late at restart` : ''}${summary.folded ? `; ${summary.folded} folded into ${coverer?.slot ?? 'the next run'}` : ''}` +
    `${queuedFor.length ? `; ${queuedFor.length} queued for backfill, at most ${cap} per tick (${bfAtRestart} at restart)` : ''}` +
    `${summary.skipped ? `; ${summary.skipped} skipped` : ''}. At most ${summary.dispatchesAtRestart} dispatch(es) at restart.`;
  return { jobId: job.id, job: job.name, from: isoTime(from), to: isoTime(to), policy: spec.missedWindow, toleranceS: spec.toleranceS ?? null, backfillCapPerTick: cap, items, summary };
}
