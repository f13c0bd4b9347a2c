/**
 * One scenario, start to end: a sandbox built for its script, the script's moments placed on the
 * clock (the agents' hello, the data arriving, Gaffer's downtime), time run to the scenario's end,
 * then the timeline, the ledger and the verdict read back. The sandbox is closed afterwards.
 */
import type { SchedulerConfig } from '../../../common/config';
import type { Backfill, BusinessCalendar, JobSpec, JobSpecInput, Run } from '../../../common/job-schema';
import { SCENARIO_TITLES, type RehearsalEvent, type RehearsalLedgerEntry, type RehearsalScenario } from '../../../common/rehearsal';
import { Sandbox } from './sandbox';
import type { ScenarioScript } from './scenarios';
import { buildTimeline } from './timeline';
import { verdictOf } from './verdict';
import type { ZoneWords } from './words';

export interface ScenarioRun {
  input: JobSpecInput;
  spec: JobSpec;
  calendar: BusinessCalendar | undefined;
  config: SchedulerConfig;
  stepMs: number;
  ackMs: number;
  recheckMs: number;
  sameErrorTimes: number;
  words: ZoneWords;
}

export async function runScenario(script: ScenarioScript, r: ScenarioRun): Promise<RehearsalScenario> {
  const sb = new Sandbox({ spec: r.input, calendar: r.calendar, config: r.config, start: script.start, readiness: script.readiness, script: script.script, stepMs: r.stepMs, ackMs: r.ackMs, sameErrorTimes: r.sameErrorTimes, ...(script.checksPass ? { checksPass: script.checksPass } : {}) });
  try {
    sb.startGaffer();
    for (const name of script.agents) sb.hub.hello(r.spec.role, name);
    if (r.spec.preconditions.length) {
      for (const [slot, at] of script.readyAt) sb.at(at, () => sb.note('data', `the data of ${slot} is ready upstream`, { slot }));
    }
    if (script.downtime) {
      sb.at(script.downtime.from, () => sb.stopGaffer());
      sb.at(script.downtime.to, () => sb.startGaffer());
    }
    await sb.runUntil(script.until, () => told(sb, script));

    const service = sb.service;
    const runRows = service.listRuns({ job: sb.jobId, limit: 1000 }).items.reverse();
    const backfillRows = service.listBackfills({ job: sb.jobId, limit: 1000 }).items;
    const runs = new Map<string, Run>(runRows.map((x) => [x.slot, x]));
    const backfills = new Map<string, Backfill>(backfillRows.map((b) => [b.slot, b]));
    const events = buildTimeline(sb.feed, sb.evaluations, r.spec, r.recheckMs, r.words);
    for (const problem of sb.engineErrors) events.push({ source: 'note', kind: 'gaffer', ms: sb.clock.now(), at: new Date(sb.clock.now()).toISOString(), detail: `the engine reported a problem: ${problem}` });
    if (sb.cutShort) events.push({ source: 'note', kind: 'gaffer', ms: sb.clock.now(), at: new Date(sb.clock.now()).toISOString(), detail: 'the rehearsal was cut short here: the scenario did not settle' });
    const v = verdictOf({ script, spec: r.spec, runs, backfills, events, words: r.words, recheckMs: r.recheckMs });
    const ledger: RehearsalLedgerEntry[] = runRows.map((x) => ({ slot: x.slot, disposition: x.disposition, attempts: x.attempt, status: x.status, backfill: backfills.get(x.slot)?.status ?? null }));
    return {
      name: script.name,
      title: SCENARIO_TITLES[script.name],
      story: script.story,
      ...v,
      events: events.map(toWire),
      ledger,
    };
  } finally {
    sb.close();
  }
}

/** The story is told: the slots it is about finished, nothing open, nothing scripted ahead. */
function told(sb: Sandbox, script: ScenarioScript): boolean {
  if (!sb.isUp || sb.scriptedAhead > 0 || sb.hub.pending > 0) return false;
  const service = sb.service;
  const open = service.listRuns({ job: sb.jobId, limit: 1000 }).items;
  if (open.some((x) => x.status === 'pending' || x.status === 'running')) return false;
  const finished = new Set(open.map((x) => x.slot));
  if (!script.mustSee.every((s) => finished.has(s))) return false;
  if (service.listBackfills({ job: sb.jobId, status: 'dispatched', limit: 1 }).items.length) return false;
  // A queued backfill of a slot the story is about is part of it: it runs at the next tick.
  const queued = service.listBackfills({ job: sb.jobId, status: 'queued', limit: 1000 }).items;
  return !queued.some((b) => script.mustSee.includes(b.slot));
}

function toWire(e: RehearsalEvent): RehearsalEvent {
  return { at: e.at, kind: e.kind, detail: e.detail, ...(e.slot ? { slot: e.slot } : {}), ...(e.attempt ? { attempt: e.attempt } : {}), ...(e.surprise ? { surprise: true } : {}) };
}
