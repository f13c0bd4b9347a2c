/**
 * The jobs slice: the job list (all pages), the editor's calls (get / validate / preview / rehearse / save)
 * and the operator's job actions; "Why didn't it run?" asks it for an explanation.
 *
 * 1. Editor calls (validate / preview / rehearse) are not stored: the editor owns its draft and drops stale
 *    answers itself.
 * 2. Saves and operator actions toast their outcome and refresh what they touch: the list, the
 *    runs (ledger and backfill queue) and the dashboard's counts.
 */
import type { ConsoleArgs, TriggerResult } from '../../../src-main/common/console-api';
import type { Explanation, Job, JobIssue, JobSpecInput, JobSummary, PreviewResult, TriggerChoices } from '../../../src-main/common/job-schema';
import type { RehearsalResult } from '../../../src-main/common/rehearsal';
import { guarded } from '../../lib/errors';
import { runLink } from '../../lib/run-words';
import { emptyResource, type Resource } from '../resource';
import { loaderTopic, resourceLoader, type Slice, type SliceContext } from '../slice';

export interface JobsState {
  jobs: { list: Resource<JobSummary[]> };
}

export const initialJobsState = (): JobsState => ({ jobs: { list: emptyResource() } });

export type JobActionKind = 'trigger' | 'pause' | 'resume' | 'enable' | 'disable';

export interface TriggerOptions {
  slot?: string;
  checkPreconditions?: boolean;
}

/** `pause`: until a time (it resumes by itself), and letting the runs already started finish. */
export interface PauseOptions {
  until?: string | null;
  drain?: boolean;
}

export type JobActionOptions = TriggerOptions & PauseOptions;

export interface SaveJobInput {
  /** Absent: create. */
  id?: string;
  spec: JobSpecInput;
  reason?: string;
  expectedVersion?: number;
}

export interface JobsActions {
  getJob(id: string): Promise<Job>;
  validateJob(spec: Record<string, unknown>): Promise<{ ok: boolean; issues: JobIssue[] }>;
  previewJob(args: ConsoleArgs<'jobs.preview'>): Promise<PreviewResult>;
  /** The five-scenario rehearsal of an unsaved spec (nothing live is touched). */
  rehearseJob(args: ConsoleArgs<'jobs.rehearse'>): Promise<RehearsalResult>;
  saveJob(input: SaveJobInput): Promise<{ job: Job; warnings: JobIssue[] }>;
  /** `trigger` takes the slot to run (say which before it runs) and whether to check its preconditions first; `pause` takes `until` (it resumes by itself) and `drain` (runs already started finish). */
  jobAction(kind: JobActionKind, job: Pick<Job, 'id' | 'name'>, reason: string, opts?: JobActionOptions): Promise<Job | TriggerResult>;
  /** The slots "run now" can run and what it would do to each (nothing changes). */
  triggerChoices(id: string): Promise<TriggerChoices>;
  explainJob(id: string, at?: string): Promise<Explanation>;
}

const ACTION_WORDS: Record<JobActionKind, { done: string; failed: string }> = {
  trigger: { done: 'Triggered', failed: 'trigger' },
  pause: { done: 'Paused', failed: 'pause' },
  resume: { done: 'Resumed', failed: 'resume' },
  enable: { done: 'Enabled', failed: 'enable' },
  disable: { done: 'Disabled', failed: 'disable' },
};

export function createJobsSlice(ctx: SliceContext<JobsState>): Slice<JobsActions> {
  const { call } = ctx;
  const list = resourceLoader(
    ctx,
    { get: () => ctx.get().jobs.list, set: (list) => ctx.set({ jobs: { ...ctx.get().jobs, list } }) },
    async () => {
      const out: JobSummary[] = [];
      let after: string | undefined;
      for (let i = 0; i < 20; i++) {
        const page = await call('jobs.list', { limit: 1000, ...(after !== undefined ? { after } : {}) });
        out.push(...page.items);
        if (page.next === null) break;
        after = page.next;
      }
      return out;
    },
  );

  /** After an operator action: what it touched is fetched now (not at the next live tick). */
  const refreshAfterChange = () => {
    void list.refresh();
    void ctx.refresh('runs');
    ctx.invalidate('dashboard');
  };

  const actions: JobsActions = {
    getJob: (id) => call('jobs.get', { id }),
    validateJob: (spec) => call('jobs.validate', { spec }),
    previewJob: (args) => call('jobs.preview', args),
    rehearseJob: (args) => call('jobs.rehearse', args),

    async saveJob(input) {
      const r = input.id
        ? await call('jobs.update', { id: input.id, spec: input.spec, reason: input.reason ?? '', ...(input.expectedVersion !== undefined ? { expectedVersion: input.expectedVersion } : {}) })
        : await call('jobs.create', { spec: input.spec, ...(input.reason ? { reason: input.reason } : {}) });
      ctx.toast('success', input.id ? `Saved ${r.job.name}: now version ${r.job.version}` : `Created job ${r.job.name} (version ${r.job.version})`, r.warnings.length ? `${r.warnings.length} warning(s): ${r.warnings[0]!.message}` : undefined);
      refreshAfterChange();
      return r;
    },

    jobAction(kind, job, reason, opts = {}) {
      return guarded(ctx.toast, `${ACTION_WORDS[kind].failed} ${job.name}`, async () => {
        let out: Job | TriggerResult;
        switch (kind) {
          case 'trigger': {
            const r = await call('jobs.trigger', { id: job.id, reason, ...(opts.slot !== undefined ? { slot: opts.slot } : {}), ...(opts.checkPreconditions ? { checkPreconditions: true } : {}) });
            ctx.toast(r.dispatched ? 'success' : 'info', r.dispatched ? `Triggered ${job.name} (${r.run.slot})` : `${job.name}: ${r.created ? 'slot claimed' : 'nothing new'}`, r.message, undefined, runLink(r.run));
            out = r;
            break;
          }
          case 'pause':
            out = await call('jobs.pause', { id: job.id, reason, ...(opts.until ? { until: opts.until } : {}), ...(opts.drain ? { drain: true } : {}) });
            break;
          case 'resume':
            out = await call('jobs.resume', { id: job.id, reason });
            break;
          case 'enable':
          case 'disable':
            out = await call('jobs.setEnabled', { id: job.id, enabled: kind === 'enable', reason });
            break;
        }
        if (kind !== 'trigger') ctx.toast(kind === 'pause' || kind === 'disable' ? 'warning' : 'success', `${ACTION_WORDS[kind].done} ${job.name}`, `Reason: ${reason}`);
        refreshAfterChange();
        return out;
      });
    },

    triggerChoices: (id) => call('jobs.triggerChoices', { id }),
    explainJob: (id, at) => call('jobs.explain', { id, ...(at ? { at } : {}) }),
  };

  return { actions, topics: { jobs: loaderTopic(list) }, dispose: () => list.dispose() };
}
