/**
 * Pauses people ask for: a job until a time (it resumes by itself), a job that finishes the work
 * it already started and then waits (drain), and a whole role.
 *
 * Invariants:
 * 1. One pause per job, one per role; each records who, when, why and (optionally) until when,
 *    and every pause and resume — by hand or because its time came — is audited in its
 *    transaction (`job.pause` / `job.resume`, `role.pause` / `role.resume`).
 * 2. A paused job starts no new slot. Its runs already started: with `drain` they finish, retries
 *    included; without it their retries wait for the resume like everything else (runner).
 * 3. A role pause is a pause of each of its jobs (`pause_scope = 'role'`, so the runner, the
 *    explainer and the console see one kind of pause) plus a closed claim gate: `claim` answers
 *    "no task" for the role (P2). A job with its own pause keeps it through a role pause and
 *    resume; a job created in (or moved into) a paused role is paused with it.
 * 4. `until` is a wall-clock instant; one timer on the earliest one (on the core's `wakeups`
 *    clock, re-armed after a clock jump) resumes what is due, so a sleep past it resumes at wake.
 */
import { GafferError } from '../../common/errors';
import { MAX_PAUSE_DAYS, optionalReason, pauseInput, type Job, type RolePause } from '../../common/job-schema';
import type { Logger } from '../../common/logger';
import { roleName } from '../../common/schemas';
import { parseOrThrow } from '../../common/validate';
import type { CoreContext } from '../context';
import type { Disposable } from '../events';
import { InstantTimer } from '../time/instant-timer';
import type { JobRepo } from './repo';
import { toJob, type JobRow } from './rows';
import { preparePauseStatements, type RolePauseRow } from './pause-store';

/** The actor of a pause that ended because its time came. */
export const PAUSE_TIMER_ACTOR = 'scheduler';
const MAX_UNTIL_MS = MAX_PAUSE_DAYS * 86_400_000;

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const toRolePause = (r: RolePauseRow): RolePause => ({ role: r.role, at: iso(r.at)!, by: r.by, reason: r.reason, until: iso(r.until) });

export interface PausesDeps {
  ctx: CoreContext;
  repo: JobRepo;
  logger: Logger;
  /** One transaction of jobs work (the engine's: the runner follows the change after it). */
  write<T>(fn: () => T): T;
  /** A resumed job's waiting slots are looked at again at once (inside `write`). */
  wakeWaiting(jobId: string): void;
}

export class Pauses {
  private readonly timer: InstantTimer;
  private running = false;
  private listeners: Disposable[] = [];
  /** Roles paused now (the claim gate reads it on every claim: no query on the hot path). */
  private readonly closed = new Map<string, RolePause>();
  private readonly q;

  private readonly ctx: CoreContext;
  private readonly repo: JobRepo;
  private readonly logger: Logger;

  constructor(private readonly deps: PausesDeps) {
    this.ctx = deps.ctx;
    this.repo = deps.repo;
    this.logger = deps.logger;
    this.timer = new InstantTimer(deps.ctx.clock, () => this.resumeDue());
    this.q = preparePauseStatements(deps.ctx.db);
    for (const r of this.q.rolePauses.all()) this.closed.set(r.role, toRolePause(r));
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.listeners.push(this.ctx.events.on('clock.jumped', () => this.arm()));
    this.resumeDue();
  }

  stop(): void {
    this.running = false;
    this.timer.cancel();
    for (const l of this.listeners.splice(0)) l.dispose();
  }

  /** The claim gate (invariant 3): why `role` hands out no task now, or null. */
  roleClosed(role: string): RolePause | null {
    return this.closed.get(role) ?? null;
  }

  rolePauses(): RolePause[] {
    return [...this.closed.values()].sort((a, b) => (a.role < b.role ? -1 : 1));
  }

  private untilOf(until: string | null | undefined): number | null {
    if (until === undefined || until === null) return null;
    const at = Date.parse(until);
    const now = this.ctx.clock.now();
    if (!(at > now)) throw new GafferError('bad_request', 'invalid pause at "until": it must be in the future');
    if (at - now > MAX_UNTIL_MS) throw new GafferError('bad_request', `invalid pause at "until": at most ${MAX_PAUSE_DAYS} days ahead`);
    return at;
  }

  // ---- jobs ------------------------------------------------------------------------------------

  pauseJob(id: string, input: unknown): Job {
    const { reason, actor, until, drain } = parseOrThrow(pauseInput, input, 'pause');
    const untilAt = this.untilOf(until);
    const job = this.deps.write(() => {
      const row = this.repo.jobRow(id);
      if (row.paused_at !== null && row.pause_scope !== 'role') throw new GafferError('invalid_transition', `job ${row.name} is already paused (by ${row.paused_by}: ${row.paused_reason})`);
      // A job paused with its role gets its own pause on top: resuming the role leaves it paused.
      this.repo.patchJob(row.id, { paused_at: this.ctx.clock.now(), paused_by: actor, paused_reason: reason, paused_until: untilAt, pause_drain: drain ? 1 : 0, pause_scope: null });
      return this.jobEvent(row.id, 'pause', actor, { reason, until: iso(untilAt), drain: !!drain, ...(row.pause_scope === 'role' ? { overRolePause: true } : {}) });
    });
    this.arm();
    return job;
  }

  resumeJob(id: string, input: unknown): Job {
    const { reason, actor } = parseOrThrow(optionalReason, input, 'resume');
    const job = this.deps.write(() => {
      const row = this.repo.jobRow(id);
      if (row.paused_at === null) throw new GafferError('invalid_transition', `job ${row.name} is not paused`);
      if (row.pause_scope === 'role') throw new GafferError('invalid_transition', `job ${row.name} is paused with its role ${row.role}; resume the role`);
      return this.resumeRow(row, actor, reason ?? null);
    });
    this.arm();
    return job;
  }

  /** Resumes a job (inside a write): back to its role's pause if the role is paused, else running. */
  private resumeRow(row: JobRow, actor: string, reason: string | null): Job {
    const role = this.q.rolePause.get(row.role);
    const was = { pausedBy: row.paused_by, pausedAt: iso(row.paused_at), pausedReason: row.paused_reason, until: iso(row.paused_until) };
    if (role && row.pause_scope !== 'role') {
      this.repo.patchJob(row.id, { paused_at: role.at, paused_by: role.by, paused_reason: role.reason, paused_until: null, pause_drain: 0, pause_scope: 'role' });
    } else {
      this.repo.patchJob(row.id, { paused_at: null, paused_by: null, paused_reason: null, paused_until: null, pause_drain: 0, pause_scope: null });
      this.wakeWaiting(row.id);
    }
    return this.jobEvent(row.id, 'resume', actor, { ...(reason ? { reason } : {}), ...was, ...(role ? { rolePaused: true } : {}) });
  }

  /** Slots waiting because of the pause are looked at again at once. */
  private wakeWaiting(jobId: string): void {
    this.deps.wakeWaiting(jobId);
  }

  private jobEvent(id: string, action: string, actor: string, detail: Record<string, unknown>): Job {
    const row = this.repo.jobRow(id);
    const job = toJob(row);
    this.ctx.audit.append({ type: `job.${action}`, actor, subject: `job:${id}`, detail: { name: row.name, version: row.version, ...detail } });
    this.ctx.store.emit({ type: 'job.changed', job, action, actor });
    return job;
  }

  /** A job created in, or moved into, a paused role is paused with it (inside the caller's write). */
  followRole(jobId: string, actor: string): void {
    const row = this.repo.jobRow(jobId);
    const role = this.q.rolePause.get(row.role);
    if (role && row.paused_at === null) {
      this.repo.patchJob(row.id, { paused_at: role.at, paused_by: role.by, paused_reason: role.reason, paused_until: null, pause_drain: 0, pause_scope: 'role' });
      this.jobEvent(row.id, 'pause', actor, { reason: role.reason, role: row.role, byRole: true });
    } else if (!role && row.pause_scope === 'role') {
      this.resumeRow(row, actor, `moved out of a paused role`);
    }
  }

  // ---- roles -----------------------------------------------------------------------------------

  pauseRole(role: string, input: unknown): RolePause {
    const name = parseOrThrow(roleName, role, 'role');
    const { reason, actor, until, drain } = parseOrThrow(pauseInput, input, 'pause');
    if (drain !== undefined) throw new GafferError('bad_request', 'invalid pause at "drain": a role pause always lets the work already started finish');
    const untilAt = this.untilOf(until);
    const out = this.deps.write(() => {
      const cur = this.q.rolePause.get(name);
      if (cur) throw new GafferError('invalid_transition', `role ${name} is already paused (by ${cur.by}: ${cur.reason})`);
      const now = this.ctx.clock.now();
      const row: RolePauseRow = { role: name, at: now, by: actor, reason, until: untilAt };
      this.q.putRolePause.run(row);
      const jobs: string[] = [];
      for (const j of this.q.jobsOfRole.all(name)) {
        if (j.paused_at !== null) continue; // its own pause stays as it is
        this.repo.patchJob(j.id, { paused_at: now, paused_by: actor, paused_reason: reason, paused_until: null, pause_drain: 1, pause_scope: 'role' });
        this.jobEvent(j.id, 'pause', actor, { reason, role: name, byRole: true });
        jobs.push(j.name);
      }
      this.ctx.audit.append({ type: 'role.pause', actor, subject: `role:${name}`, detail: { reason, until: iso(untilAt), jobs } });
      const p = toRolePause(row);
      this.ctx.store.emit({ type: 'role.paused', pause: p, paused: true, actor });
      return p;
    });
    this.closed.set(out.role, out);
    this.arm();
    return out;
  }

  resumeRole(role: string, input: unknown): RolePause {
    const name = parseOrThrow(roleName, role, 'role');
    const { reason, actor } = parseOrThrow(optionalReason, input, 'resume');
    const out = this.deps.write(() => this.resumeRoleRow(name, actor, reason ?? null));
    this.closed.delete(name);
    this.arm();
    return out;
  }

  private resumeRoleRow(name: string, actor: string, reason: string | null): RolePause {
    const cur = this.q.rolePause.get(name);
    if (!cur) throw new GafferError('invalid_transition', `role ${name} is not paused`);
    this.q.deleteRolePause.run(name);
    const jobs: string[] = [];
    for (const j of this.q.jobsOfRole.all(name)) {
      if (j.pause_scope !== 'role') continue;
      this.resumeRow(j, actor, reason);
      jobs.push(j.name);
    }
    this.ctx.audit.append({ type: 'role.resume', actor, subject: `role:${name}`, detail: { ...(reason ? { reason } : {}), pausedBy: cur.by, pausedAt: iso(cur.at), pausedReason: cur.reason, jobs } });
    const p = toRolePause(cur);
    this.ctx.store.emit({ type: 'role.paused', pause: p, paused: false, actor });
    return p;
  }

  // ---- the timer -------------------------------------------------------------------------------

  private arm(): void {
    if (this.running) this.timer.set(this.q.nextUntil.get()?.t ?? null);
  }

  /** Ends every pause whose time came (invariant 4). */
  resumeDue(): void {
    const now = this.ctx.clock.now();
    try {
      const roles = this.q.dueRoles.all(now);
      const jobs = this.q.dueJobs.all(now);
      if (roles.length + jobs.length > 0) {
        this.deps.write(() => {
          for (const r of roles) this.resumeRoleRow(r.role, PAUSE_TIMER_ACTOR, `the pause ended at ${iso(r.until)}`);
          for (const j of jobs) {
            const cur = this.repo.jobRow(j.id);
            if (cur.paused_until !== null && cur.paused_until <= now && cur.pause_scope !== 'role') this.resumeRow(cur, PAUSE_TIMER_ACTOR, `the pause ended at ${iso(cur.paused_until)}`);
          }
        });
        for (const r of roles) this.closed.delete(r.role);
          }
    } catch (e) {
      this.logger.error('pauses: could not end a pause whose time came; trying again shortly', { error: e instanceof Error ? e.message : String(e) });
      if (this.running) this.timer.set(this.ctx.clock.now() + 60_000);
      return;
    }
    this.arm();
  }
}
