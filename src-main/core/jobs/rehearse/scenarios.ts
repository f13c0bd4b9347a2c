/**
 * The five scenarios of a job's life (the seed's advice; PROTOCOL §11), each as a script for the
 * throw-away world: when the upstream data of each slot is ready, what the agent does with each
 * trigger, when Gaffer is down, how far to run, and which slots the verdict is about. The script is
 * built from the job's own schedule, window, calendar and zone: the slots are the job's real next
 * slots, and every instant is placed relative to their windows.
 *
 * Invariants:
 * 1. A script only decides what the outside world does (data, agent, Gaffer's process). Everything
 *    Gaffer decides (checks, waits, dispatch, retries, misses, folds, backfills) is the engine's.
 * 2. The agent's steps are the same three in every scenario: `fetch` (reads the data), `send` (a
 *    side effect: the report goes out) and `archive`; it never repeats a step the trigger lists as
 *    done (`completedSteps`), as an agent written to the protocol does.
 */
import type { JobSpec } from '../../../common/job-schema';
import type { ScenarioName } from '../../../common/rehearsal';
import type { JobPlan } from '../plan';
import type { SlotOccurrence } from '../schedule';
import { localClock } from '../time-util';
import type { Readiness } from './scripted-checks';
import type { AgentAction, AgentScript, OfferedTrigger } from './scripted-hub';

export const STEPS = ['fetch', 'send', 'archive'] as const;

/** What each step does, for the timeline. */
export const STEP_WORDS: Record<string, string> = {
  fetch: 'the data is read',
  send: 'the report is sent (a side effect)',
  archive: 'the report is archived downstream',
};

/** One of the job's real slots, with its effective window. */
export interface SlotInfo {
  slot: string;
  at: number;
  local: string;
  opensAt: number;
  closesAt: number;
  latestStart: number;
}

export interface ScenarioScript {
  name: ScenarioName;
  /** What the scenario scripts, in plain words (instants in the job's zone). */
  story: string;
  /** Where the world's clock starts (just before the first slot of interest). */
  start: number;
  /** The last instant the scenario runs to. */
  until: number;
  /** The slots the verdict is about, in order. */
  focus: SlotInfo[];
  /** The story is told once these slots are finished and nothing else is going on. */
  mustSee: string[];
  readiness: Readiness;
  script: AgentScript;
  /** Agents saying hello when the world starts. */
  agents: string[];
  /** Gaffer's downtime (the cross-day scenario): stopped at `from`, started at `to`. */
  downtime?: { from: number; to: number };
  /** For the verdict: when the data of a focus slot is ready. */
  readyAt: Map<string, number>;
  /** What Gaffer's own checks (PROTOCOL §13) find after the agent said done; absent: they pass. */
  checksPass?: (slot: string, attempt: number) => boolean;
}

export interface ScenarioContext {
  spec: JobSpec;
  plan: JobPlan;
  /** The instant the rehearsal looks for the job's next slot from. */
  from: number;
  /** How long one step of the scripted agent takes (`stepMsOf`). */
  stepMs: number;
  /** Formats an instant in the job's zone (for the stories). */
  local: (ms: number) => string;
}

const MIN = 60_000;
const HOUR = 3_600_000;
const LEAD_MS = MIN;

/** The first `n` due slots after `from`, each with its window (skipped entries are not counted). */
export function dueSlots(plan: JobPlan, from: number, n: number): SlotInfo[] {
  const { entries } = plan.upcoming(from, n, 20 * n + 400);
  const due = entries.filter((e) => e.disposition === 'due').slice(0, n);
  return due.map((occ) => info(plan, occ));
}

function info(plan: JobPlan, occ: SlotOccurrence): SlotInfo {
  const w = plan.windowOf(occ);
  return { slot: occ.slot, at: occ.at, local: occ.local, opensAt: w.opensAt, closesAt: w.closesAt, latestStart: w.latestStart };
}

/** How long one step of the scripted agent takes: a few seconds for a frequent job, a minute at most. */
export function stepMsOf(spec: JobSpec, s0: SlotInfo, s1: SlotInfo): number {
  const span = Math.min(Math.max(s0.closesAt - s0.opensAt, 1000), s1.at - s0.at);
  return Math.round(Math.min(MIN, Math.max(1000, span / 40), (spec.runTimeoutS * 1000) / 10));
}

/** The agent that does its steps and succeeds. */
const works = (t: OfferedTrigger): AgentAction[] => [{ do: 'start' }, ...STEPS.filter((s) => !t.completedSteps.includes(s)).map((step) => ({ do: 'step', step }) as AgentAction), { do: 'succeed' }];

const alwaysReady: Readiness = () => 0;

function startOf(s: SlotInfo): number {
  return Math.min(s.at, s.opensAt) - LEAD_MS;
}

function hasWindow(s: SlotInfo): boolean {
  return s.closesAt > s.opensAt;
}

export function buildScenario(name: ScenarioName, c: ScenarioContext): ScenarioScript {
  const ahead = dueSlots(c.plan, c.from, 60);
  switch (name) {
    case 'normal':
      return normal(c, ahead);
    case 'data_delay':
      return dataDelay(c, ahead);
    case 'downstream_timeout':
      return downstreamTimeout(c, ahead);
    case 'process_restart':
      return processRestart(c, ahead);
    case 'cross_day_backfill':
      return crossDay(c, ahead);
    case 'said_done_not_done':
      return saidDone(c, ahead);
  }
}

/** The agent says done on its first attempt of the first slot without doing the last step; Gaffer's checks find it out. */
function saidDone(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const [s0] = ahead as [SlotInfo];
  const { until } = horizon(ahead, s0, c, 0);
  const first = (t: OfferedTrigger): boolean => t.slot === s0.slot && t.attempt === 1;
  const names = (c.spec.verify?.checks ?? []).map((k) => `“${k.name}”`).join(', ');
  return {
    name: 'said_done_not_done',
    story: c.spec.verify
      ? `On ${s0.slot} the agent reads the data and reports done on its first attempt without sending the report; Gaffer's checks (${names}) find the work not done. Later attempts do the work.`
      : `On ${s0.slot} the agent reports done on its first attempt without sending the report — but the job has no "done when…" checks, so nothing finds it out.`,
    start: startOf(s0),
    until,
    focus: [s0],
    mustSee: [s0.slot],
    readiness: alwaysReady,
    script: (t) => (first(t) ? [{ do: 'start' }, ...(['fetch'] as const).filter((s) => !t.completedSteps.includes(s)).map((step) => ({ do: 'step', step }) as AgentAction), { do: 'succeed' }] : works(t)),
    agents: ['agent-1'],
    readyAt: new Map(),
    checksPass: (slot, attempt) => !(slot === s0.slot && attempt === 1),
  };
}

/**
 * The story of slot `s` goes on until what the missed-window policy does with it is seen: its last
 * attempt can start until its latest start and take the agent's work; a backfill of it runs at the
 * first slot opening after that (a tick). Returns that tick, and the end of the scenario: just
 * before the slot after the tick opens (or `least`, whichever is later).
 */
function horizon(ahead: SlotInfo[], s: SlotInfo, c: ScenarioContext, least: number): { tick: SlotInfo; until: number } {
  const decided = s.latestStart + 6 * c.stepMs;
  const k = ahead.findIndex((x) => x.at > decided);
  const tick = ahead[k] ?? ahead[ahead.length - 1]!;
  const after = ahead[k + 1];
  return { tick, until: Math.max(least, after ? after.at - 1 : tick.latestStart + HOUR) };
}

function normal(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const [s0, s1] = ahead as [SlotInfo, SlotInfo];
  return {
    name: 'normal',
    story: `${c.spec.preconditions.length ? 'The data is ready when the window opens' : 'The job has no precondition'}; the agent reads the data, sends the report and archives it, and succeeds.`,
    start: startOf(s0),
    until: Math.max(s1.at - 1, s0.latestStart),
    focus: [s0],
    mustSee: [s0.slot],
    readiness: alwaysReady,
    script: works,
    agents: ['agent-1'],
    readyAt: new Map(),
  };
}

function dataDelay(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const [s0, s1] = ahead as [SlotInfo, SlotInfo];
  const { tick, until } = horizon(ahead, s1, c, 0);
  // Late in the window: two thirds of the way to its close.
  const late = s0.opensAt + Math.round(((hasWindow(s0) ? s0.closesAt : s0.latestStart) - s0.opensAt) * (2 / 3));
  // Only after the window (and any tolerance) closed, and before the tick where a backfill of it can run.
  const after = s1.latestStart + Math.max(1000, Math.min(2 * HOUR, Math.round((tick.at - s1.latestStart) / 4)));
  const readyAt = new Map([
    [s0.slot, late],
    [s1.slot, after],
  ]);
  const story = c.spec.preconditions.length
    ? `The data of ${s0.slot} is ready only at ${c.local(late)}, late in its window; the data of ${s1.slot} only at ${c.local(after)}, after its window closed; from then on it is on time again.`
    : `The data of ${s0.slot} arrives only at ${c.local(late)} and that of ${s1.slot} only at ${c.local(after)} — but the job has no precondition, so nothing tells it.`;
  return {
    name: 'data_delay',
    story,
    start: startOf(s0),
    until,
    focus: [s0, s1, tick],
    mustSee: [s0.slot, s1.slot, tick.slot],
    readiness: (slot) => readyAt.get(slot) ?? 0,
    script: works,
    agents: ['agent-1'],
    readyAt,
  };
}

function downstreamTimeout(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const [s0] = ahead as [SlotInfo];
  const { tick, until } = horizon(ahead, s0, c, 0);
  const failing = (t: OfferedTrigger): boolean => t.slot === s0.slot && t.trigger !== 'backfill';
  return {
    name: 'downstream_timeout',
    story: `On ${s0.slot} the archive service downstream times out on every attempt, after the agent has read the data and sent the report; it is back after that slot's window.`,
    start: startOf(s0),
    until,
    focus: [s0, tick],
    mustSee: [s0.slot, tick.slot],
    readiness: alwaysReady,
    script: (t) =>
      failing(t)
        ? [
            { do: 'start' },
            ...(['fetch', 'send'] as const).filter((s) => !t.completedSteps.includes(s)).map((step) => ({ do: 'step', step }) as AgentAction),
            { do: 'fail', errorClass: 'retryable', error: 'the archive service timed out (no answer in 30 s)' },
          ]
        : works(t),
    agents: ['agent-1'],
    readyAt: new Map(),
  };
}

/** A short restart: two minutes, less for a job that runs every few minutes. */
function restartMs(s0: SlotInfo, s1: SlotInfo): number {
  return Math.round(Math.min(2 * MIN, Math.max(5000, (s1.at - s0.at) / 4)));
}

function processRestart(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const [s0, s1] = ahead as [SlotInfo, SlotInfo];
  const down = restartMs(s0, s1);
  const respawnMs = 30_000;
  const { until } = horizon(ahead, s0, c, s1.at - 1);
  let restarted = false;
  return {
    name: 'process_restart',
    story: `On ${s0.slot} the agent's process dies right after its first step (a supervisor starts it again ${respawnMs / 1000} s later); then, while the retry runs, Gaffer itself restarts (down for ${Math.round(down / 1000)} s).`,
    start: startOf(s0),
    until,
    focus: [s0],
    mustSee: [s0.slot],
    readiness: alwaysReady,
    script: (t, agent) => {
      if (t.slot !== s0.slot || t.trigger === 'backfill') return works(t);
      if (agent.name === 'agent-1') return [{ do: 'start' }, { do: 'step', step: 'fetch' }, { do: 'vanish', respawnAfterMs: respawnMs }];
      if (restarted) return works(t);
      restarted = true;
      const [first, ...rest] = STEPS.filter((s) => !t.completedSteps.includes(s));
      return [
        { do: 'start' },
        ...(first ? [{ do: 'step', step: first } as AgentAction] : []),
        { do: 'restart_gaffer', forMs: down },
        ...rest.map((step) => ({ do: 'step', step }) as AgentAction),
        { do: 'succeed' },
      ];
    },
    agents: ['agent-1'],
    readyAt: new Map(),
  };
}

/**
 * Gaffer is down from just after a slot ran until after the window of the first slot of a later
 * local day (with a calendar: the first workday after the non-workdays that follow, so the
 * weekend is inside the downtime), then starts and lives until the slot after that one.
 */
function crossDay(c: ScenarioContext, ahead: SlotInfo[]): ScenarioScript {
  const zone = c.plan.zone;
  let i0 = 0;
  if (c.plan.calendar) {
    // The last workday before the first non-workday ahead: the downtime then spans the weekend.
    const { entries } = c.plan.upcoming(c.from, 30, 400);
    const firstSkip = entries.find((e) => e.disposition === 'calendar_skip');
    if (firstSkip) {
      const k = ahead.findIndex((s) => s.at > firstSkip.at);
      if (k > 0) i0 = k - 1;
    }
  }
  const s0 = ahead[i0]!;
  const from = s0.latestStart + Math.max(1000, Math.min(HOUR, Math.round(((ahead[i0 + 1]?.at ?? s0.latestStart + HOUR) - s0.latestStart) / 4)));
  const day = localClock(from, zone).date;
  let m = ahead.findIndex((s, k) => k > i0 && localClock(s.at, zone).date > day);
  if (m < 0 || m + 1 >= ahead.length) m = Math.min(i0 + 1, ahead.length - 2);
  const sm = ahead[m]!;
  const next = ahead[m + 1]!;
  const to = sm.latestStart + Math.max(1000, Math.min(30 * MIN, Math.round((next.at - sm.latestStart) / 4)));
  const missed = ahead.filter((s) => s.at > from && s.at < to && s.slot !== next.slot);
  const { until } = horizon(ahead, next, c, 0);
  const offDays = c.plan.slots(from, to).filter((e) => e.disposition === 'calendar_skip').length;
  const weekend = offDays ? ` (and ${offDays} slot${offDays === 1 ? '' : 's'} on non-workdays of the calendar)` : '';
  return {
    name: 'cross_day_backfill',
    story: `Gaffer stops at ${c.local(from)}, after ${s0.slot} ran, and starts again only at ${c.local(to)}: ${missed.length} slot${missed.length === 1 ? '' : 's'} of the job came due while it was down${weekend}. Then the next slot, ${next.slot}, opens as usual.`,
    start: startOf(s0),
    until,
    focus: [...missed, next],
    mustSee: [s0.slot, ...missed.map((s) => s.slot), next.slot],
    readiness: alwaysReady,
    script: works,
    agents: ['agent-1'],
    downtime: { from, to },
    readyAt: new Map(),
  };
}
