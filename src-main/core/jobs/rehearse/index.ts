/**
 * Rehearse a job before trusting it (PROTOCOL §11): its policies walked through the five
 * scenarios of the seed — normal trigger, data delay, downstream timeout, process restart,
 * cross-day backfill — on the real jobs engine, each in a throw-away world of its own
 * (sandbox.ts). `core.rehearsal.rehearse({spec, scenarios?, from?})`.
 *
 * Invariants:
 * 1. A rehearsal never writes to the live database, never pushes to a real agent and never runs a
 *    command, HTTP request, file or signal check for real: it reads only the live calendars (the
 *    job's calendar is copied into each sandbox) and the live scheduler settings.
 * 2. The spec is validated exactly as `POST /jobs` validates it; a spec with errors is refused with
 *    its issues (`bad_request`) and nothing is run.
 * 3. At most MAX_CONCURRENT rehearsals run at once (each is CPU work on the server's thread);
 *    another is refused `rate_limited`, so a burst of edits cannot pile work up.
 */
import { DEFAULT_SAME_ERROR_TIMES } from '../../../common/job-schema';
import type { SchedulerConfig } from '../../../common/config';
import { GafferError } from '../../../common/errors';
import type { BusinessCalendar, JobSpecInput } from '../../../common/job-schema';
import { rehearseInput, SCENARIO_NAMES, VERIFY_SCENARIO, type RehearsalResult } from '../../../common/rehearsal';
import { parseOrThrow } from '../../../common/validate';
import { JobPlan } from '../plan';
import type { Calendar } from '../schedule';
import { assertValid, validateJobInput } from '../validate-job';
import { runScenario } from './run-scenario';
import { ACK_MS } from './scripted-hub';
import { buildScenario, dueSlots, stepMsOf } from './scenarios';
import { ZoneWords } from './words';

const MAX_CONCURRENT = 2;

/** The sweep is the runner's safety net for changes it was not told of; in a rehearsal every change reaches it as an event. */
const REHEARSAL_SWEEP_S = 6 * 3600;

export interface RehearsalDeps {
  /** The live calendars, read only. */
  calendar: (id: string) => BusinessCalendar | undefined;
  config: SchedulerConfig;
  now: () => number;
  /**
   * How fast the scripted agent answers (default: an offer accepted after 1 s, steps a few seconds
   * to a minute apart, by the job's rhythm). Tests comparing a rehearsal with the live engine's
   * test agents, which answer at once, set both to 0.
   */
  pace?: { ackMs: number; stepMs: number };
  /** The loop breaker's count, as set live (default 3; PROTOCOL §14). */
  sameErrorTimes?: () => number;
}

export class Rehearsal {
  private running = 0;

  constructor(private readonly deps: RehearsalDeps) {}

  async rehearse(input: unknown): Promise<RehearsalResult> {
    const args = parseOrThrow(rehearseInput, input, 'rehearsal');
    const now = this.deps.now();
    const calendarOf = (id: string): Calendar | undefined => this.deps.calendar(id);
    const spec = assertValid(validateJobInput(args.spec, calendarOf, now));
    if (this.running >= MAX_CONCURRENT) throw new GafferError('rate_limited', `${this.running} rehearsals are running; try again in a moment`);
    this.running++;
    const t0 = performance.now();
    try {
      const from = args.from !== undefined ? Date.parse(args.from) : now;
      const calendar = spec.calendar !== undefined ? this.deps.calendar(spec.calendar) : undefined;
      const plan = new JobPlan(spec, calendar);
      const words = new ZoneWords(plan.zone);
      const [s0, s1] = dueSlots(plan, from, 2);
      if (!s0 || !s1) throw new GafferError('bad_request', 'the job has no two slots to rehearse in the next ten years');
      const run = {
        input: args.spec as JobSpecInput,
        spec,
        calendar,
        config: { ...this.deps.config, sweepIntervalS: Math.max(this.deps.config.sweepIntervalS, REHEARSAL_SWEEP_S) },
        stepMs: this.deps.pace?.stepMs ?? stepMsOf(spec, s0, s1),
        ackMs: this.deps.pace?.ackMs ?? ACK_MS,
        recheckMs: plan.recheckMs(s0.at),
        sameErrorTimes: this.deps.sameErrorTimes?.() ?? DEFAULT_SAME_ERROR_TIMES,
        words,
      };
      const names = SCENARIO_NAMES.filter((n) => (args.scenarios ? args.scenarios.includes(n) : n !== VERIFY_SCENARIO || spec.verify !== undefined));
      const scenarios = [];
      for (const name of names) scenarios.push(await runScenario(buildScenario(name, { spec, plan, from, stepMs: run.stepMs, local: (ms) => words.moment(ms) }), run));
      return { job: spec.name, timezone: plan.zone, from: new Date(from).toISOString(), elapsedMs: Math.round(performance.now() - t0), scenarios };
    } finally {
      this.running--;
    }
  }
}
