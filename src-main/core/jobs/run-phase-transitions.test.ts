/**
 * The run phase machine and its one writer (`JobRepo.movePhase`): every edge of the table is
 * applied (columns, status, audit row with the phases), every other change is refused with
 * `invalid_transition` and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GafferError } from '../../common/errors';
import type { RunStatus } from '../../common/job-schema';
import { makeTestCore, type TestCore } from '../tests/test-core';
import { CalendarRepo } from './calendar-repo';
import { JobRepo } from './repo';
import type { PhaseChange, RunRow } from './rows';
import { runPhase, type PhaseColumns, type RunPhase } from './run-phase';
import { isRunEdge } from './run-transitions';
import { allPhaseEdges, isPhaseEdge, PHASE_CAUSES, PHASE_STATUSES, statusEdgeOf, type PhaseCause } from './run-phase-transitions';

let core: TestCore;
let repo: JobRepo;
let jobId: string;
let n = 0;

beforeAll(() => {
  core = makeTestCore();
  repo = new JobRepo(core, new CalendarRepo(core.db));
  jobId = core.jobs.create({ name: 'phases', role: 'reporter', schedule: { cron: '0 9 * * *', timezone: 'UTC' } }, { actor: 'test' }).job.id;
});
afterAll(() => core.close());

/** Rows of each phase (with each status the phase allows). */
const SHAPES: Record<RunPhase, PhaseColumns[]> = {
  checking: [{ status: 'pending', dispatched_at: null, instance_id: null, attempt: 0, disposition: 'waiting' }],
  undelivered: [{ status: 'pending', dispatched_at: null, instance_id: null, attempt: 1, disposition: 'retry_scheduled' }],
  retrying: [{ status: 'running', dispatched_at: null, instance_id: null, attempt: 1, disposition: 'retry_scheduled' }],
  offered: [
    { status: 'pending', dispatched_at: 5, instance_id: null, attempt: 1, disposition: 'dispatched' },
    { status: 'running', dispatched_at: 5, instance_id: null, attempt: 2, disposition: 'dispatched' },
  ],
  started: [{ status: 'running', dispatched_at: 5, instance_id: 'inst_a', attempt: 1, disposition: 'running' }],
  verifying: [{ status: 'running', dispatched_at: 5, instance_id: null, attempt: 1, disposition: 'verifying' }],
  finished: [
    { status: 'success', dispatched_at: null, instance_id: null, attempt: 1, disposition: 'ran' },
    { status: 'failed', dispatched_at: null, instance_id: null, attempt: 1, disposition: 'failed' },
    { status: 'skipped', dispatched_at: null, instance_id: null, attempt: 0, disposition: 'skipped_calendar' },
  ],
};
const PHASES = Object.keys(SHAPES) as RunPhase[];
const statusAfter = (cause: PhaseCause, before: PhaseColumns): RunStatus => statusEdgeOf(cause)?.to ?? before.status;

/** A run row in `shape`, put there by hand (the test's own setup, not the writer). */
function runIn(shape: PhaseColumns): RunRow {
  n++;
  const claimed = w(() => repo.claimRun(
    { id: `run_${n}`, jobId, jobName: 'phases', slot: `s${n}`, slotAt: n, disposition: 'waiting', trigger: 'schedule', maxRetry: 3, nextAttemptAt: null, opensAt: 0, windowClosesAt: null, version: 1, traceId: 't', idempotencyKey: `k${n}` },
    'test',
  ));
  core.db.prepare('UPDATE runs SET status = @status, dispatched_at = @dispatched_at, instance_id = @instance_id, attempt = @attempt, disposition = @disposition WHERE id = @id').run({ ...shape, id: claimed.id });
  // Written around the repository: the row it keeps as last written is no longer the stored one.
  repo.forgetWritten();
  return repo.run(claimed.id);
}

/** One transaction, committed even when `fn` throws: what a refused change wrote would stay. */
function w<T>(fn: () => T): T {
  let out: T | undefined;
  let err: unknown;
  core.store.write(() => {
    try {
      out = fn();
    } catch (e) {
      err = e;
    }
  });
  if (err !== undefined) throw err;
  return out as T;
}

function fieldsOf(shape: PhaseColumns): PhaseChange {
  const { status: _status, ...fields } = shape;
  return fields;
}

function auditRows(runId: string): Array<{ type: string; detail: Record<string, unknown> }> {
  return (core.db.prepare('SELECT type, detail FROM audit WHERE subject = ? ORDER BY id').all(`run:${runId}`) as Array<{ type: string; detail: string }>).map((r) => ({ type: r.type, detail: JSON.parse(r.detail) as Record<string, unknown> }));
}

describe('the run phase table', () => {
  it('lists exactly these edges', () => {
    const edges = allPhaseEdges().map((e) => `${e.cause}: ${e.from ?? '(none)'} → ${e.to}`);
    expect(edges).toEqual([
      'claim: (none) → checking',
      'dispatch: checking → offered',
      'dispatch: undelivered → offered',
      'dispatch: retrying → offered',
      'start: offered → started',
      'attempt_start: offered → started',
      'verify: started → verifying',
      'verify: retrying → verifying',
      'retry: offered → undelivered',
      'retry: offered → retrying',
      'retry: started → retrying',
      'retry: verifying → retrying',
      'succeed: started → finished',
      'succeed: verifying → finished',
      'fail: checking → finished',
      'fail: undelivered → finished',
      'fail: retrying → finished',
      'fail: offered → finished',
      'fail: started → finished',
      'fail: verifying → finished',
      'skip: checking → finished',
      'skip: undelivered → finished',
      'backfill: finished → finished',
    ]);
  });

  it('the writer applies every edge: the columns together, the status by its edge, one audit row with the phases', () => {
    const applied = new Set<string>();
    core.store.write(() => {
      for (const { cause, from, to } of allPhaseEdges()) {
        if (from === null) continue; // the claim is the insert (covered by every run here)
        for (const before of SHAPES[from]) {
          const edge = statusEdgeOf(cause);
          if (edge && !isRunEdge(edge.cause, before.status, edge.to)) continue; // e.g. a later attempt (running) is not `start`ed
          const status = statusAfter(cause, before);
          const after = SHAPES[to].find((s) => s.status === status);
          if (!after) continue; // e.g. an offered run of a first attempt (pending) cannot be retrying
          const run = runIn(before);
          const audited = auditRows(run.id).length;
          const next = w(() => repo.movePhase(run, cause, fieldsOf(after), 'test', { why: 'test' }));
          expect(runPhase(next), `${cause} ${from} → ${to}`).toBe(to);
          expect(next.status).toBe(status);
          expect({ dispatched_at: next.dispatched_at, instance_id: next.instance_id, attempt: next.attempt, disposition: next.disposition }).toEqual(fieldsOf(after));
          const rows = auditRows(run.id).slice(audited);
          if (cause === 'backfill') {
            expect(rows).toEqual([]); // audited as the backfill's dispatch
          } else {
            expect(rows).toEqual([{ type: `run.${cause}`, detail: expect.objectContaining({ phaseFrom: from, phaseTo: to, why: 'test' }) as unknown }]);
          }
          applied.add(`${cause}: ${from} → ${to}`);
        }
      }
    });
    expect(applied.size).toBe(allPhaseEdges().length - 1); // every edge but the claim
  });

  it('refuses every change outside the table with invalid_transition, and writes nothing', () => {
    // A refused change writes nothing, so one row per shape serves every attempt on it.
    let refused = 0;
    core.store.write(() => {
      const rows = PHASES.flatMap((from) => SHAPES[from].map((before) => ({ from, before, run: runIn(before) })));
      for (const { from, before, run } of rows) {
        for (const cause of PHASE_CAUSES) {
          for (const after of PHASES.flatMap((p) => SHAPES[p])) {
            // Where the writer would land the row: the status by the cause, the rest from the fields.
            const status = statusAfter(cause, before);
            const lands = runPhase({ ...after, status });
            if (isPhaseEdge(cause, from, lands) && PHASE_STATUSES[lands].includes(status)) continue;
            const audited = core.audit.count();
            let err: unknown;
            try {
              repo.movePhase(run, cause, fieldsOf(after), 'test');
            } catch (e) {
              err = e;
            }
            expect(err, `${cause} ${from} → ${lands}`).toBeInstanceOf(GafferError);
            expect((err as GafferError).code).toBe('invalid_transition');
            expect(repo.run(run.id)).toEqual(run);
            expect(core.audit.count()).toBe(audited);
            refused++;
          }
        }
      }
    });
    expect(refused).toBeGreaterThan(500);
  });

  it('refuses a phase edge whose status edge does not hold (a first attempt is started, a later one attempt-started)', () => {
    const later = runIn(SHAPES.offered[1]!); // running: a later attempt
    const err = (() => {
      try {
        w(() => repo.movePhase(later, 'start', fieldsOf(SHAPES.started[0]!), 'test'));
      } catch (e) {
        return e as GafferError;
      }
      return undefined;
    })();
    expect(err?.code).toBe('invalid_transition');
    expect(err?.message).toBe('a run cannot go from running to running by start');
    expect(repo.run(later.id)).toEqual(later);
    const first = runIn(SHAPES.offered[0]!); // pending: the first attempt
    expect(() => w(() => repo.movePhase(first, 'attempt_start', fieldsOf(SHAPES.started[0]!), 'test'))).toThrow('a started run attempt is running, not pending');
    expect(repo.run(first.id)).toEqual(first);
  });
});
