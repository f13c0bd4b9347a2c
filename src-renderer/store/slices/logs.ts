/**
 * The logs slice: live tails of the logs on screen (`logs` topic), usage and cost for the
 * dashboard (`usage` topic), the log settings, and the calls a log pane and a timeline make.
 * Lines themselves are not kept in the store: a pane holds the window it shows (lib/log-window).
 */
import type { ConsoleArgs, ConsoleResult, LogAttemptsResult, LogSearchHit, LogSettingsView, TimelineEntry } from '../../../src-main/common/console-api';
import type { ArtifactView, ChangeSummary, CostlyRun, DailyUsage, LogPage, LogSettings, UsageRow } from '../../../src-main/common/logs';
import { guarded } from '../../lib/errors';
import { emptyResource, type Resource } from '../resource';
import { keyCell, resourceLoader, loaderTopic, type Slice, type SliceContext, type TopicHandler } from '../slice';

export interface LogTail {
  attempt: number;
  lastSeq: number;
}

export interface UsageOverview {
  /** Per local day, role and job, the last 14 days. */
  daily: DailyUsage[];
  byRole: UsageRow[];
  byJob: UsageRow[];
  /** This week. */
  costliestRuns: CostlyRun[];
}

export interface LogsState {
  /** Subjects a pane shows → how far their log goes (from live events). */
  logTails: Record<string, LogTail>;
  usage: Resource<UsageOverview>;
  logSettings: Resource<LogSettingsView>;
}

export const initialLogsState = (): LogsState => ({ logTails: {}, usage: emptyResource(), logSettings: emptyResource() });

export interface LogsActions {
  /** A pane shows this subject's log: its tail is followed until the returned function is called. */
  followLog(subject: string): () => void;
  logAttempts(subject: string): Promise<LogAttemptsResult>;
  logPage(args: ConsoleArgs<'logs.page'>): Promise<LogPage>;
  logText(subject: string, attempt: number): Promise<{ filename: string; text: string; complete: boolean }>;
  searchLogs(q: string): Promise<LogSearchHit[]>;
  timeline(subject: string): Promise<TimelineEntry[]>;
  /** What a task's or run's attempts produced (workspaces, files, links). */
  artifacts(subject: string): Promise<ArtifactView[]>;
  /** A workspace's diff (default the latest attempt that has one). */
  workspaceDiff(subject: string, attempt?: number): Promise<{ attempt: number; diff: string } | null>;
  /** "+12 −3 in 2 files" for the rows of a list. */
  changes(subjects: string[]): Promise<Record<string, ChangeSummary>>;
  setLogSettings(settings: Partial<LogSettings>, reason: string): Promise<void>;
  /** Usage and latest-attempt span of list rows (`task:<id>`, `run:<id>`), for the Tasks and Runs lists. */
  usageOfSubjects(subjects: string[]): Promise<ConsoleResult<'usage.ofSubjects'>>;
}

const DAY_MS = 24 * 3600 * 1000;
const USAGE_DAYS = 14;

export function createLogsSlice(ctx: SliceContext<LogsState>): Slice<LogsActions> {
  const followed = new Map<string, number>();
  const usage = resourceLoader(ctx, keyCell(ctx, 'usage'), async () => {
    const start = new Date(ctx.now() - (USAGE_DAYS - 1) * DAY_MS);
    start.setHours(0, 0, 0, 0); // local midnight: the chart's first day is whole
    const from = start.toISOString();
    const [daily, byRole, byJob, costliestRuns] = await Promise.all([
      ctx.call('usage.daily', { from }),
      ctx.call('usage.summary', { by: 'role', from }),
      ctx.call('usage.summary', { by: 'job', from }),
      ctx.call('usage.costliestRuns', { limit: 5 }),
    ]);
    return { daily, byRole, byJob, costliestRuns };
  });
  const settings = resourceLoader(ctx, keyCell(ctx, 'logSettings'), () => ctx.call('logs.settings', {}), 0);

  // Live: the tails of followed logs move forward; nothing is fetched here (the pane does).
  const tails: TopicHandler = {
    refresh: async () => {},
    invalidate(inv) {
      if (!inv) return;
      let next: Record<string, LogTail> | null = null;
      for (const [subject, t] of inv.logTails) {
        if (!followed.has(subject)) continue;
        const prev = ctx.get().logTails[subject];
        if (prev && prev.lastSeq >= t.lastSeq) continue;
        next ??= { ...ctx.get().logTails };
        next[subject] = t;
      }
      if (next) ctx.set({ logTails: next });
    },
  };

  const actions: LogsActions = {
    followLog(subject) {
      followed.set(subject, (followed.get(subject) ?? 0) + 1);
      return () => {
        const n = (followed.get(subject) ?? 1) - 1;
        if (n > 0) followed.set(subject, n);
        else {
          followed.delete(subject);
          const { [subject]: _gone, ...rest } = ctx.get().logTails;
          ctx.set({ logTails: rest });
        }
      };
    },
    logAttempts: (subject) => ctx.call('logs.attempts', { subject }),
    artifacts: (subject) => ctx.call('logs.artifacts', { subject }),
    workspaceDiff: (subject, attempt) => ctx.call('logs.diff', { subject, ...(attempt !== undefined ? { attempt } : {}) }),
    changes: (subjects) => (subjects.length ? ctx.call('logs.changes', { subjects }) : Promise.resolve({})),
    logPage: (args) => ctx.call('logs.page', args),
    logText: (subject, attempt) => ctx.call('logs.text', { subject, attempt }),
    searchLogs: async (q) => (await ctx.call('logs.search', { q, limit: 100 })).items,
    timeline: (subject) => ctx.call('logs.timeline', { subject }),
    usageOfSubjects: (subjects) => ctx.call('usage.ofSubjects', { subjects }),
    setLogSettings(patch, reason) {
      return guarded(ctx.toast, 'save the log settings', async () => {
        const v = await ctx.call('logs.setSettings', { settings: patch, reason });
        ctx.set({ logSettings: { data: v, loading: false, error: null, loadedAt: ctx.now() } });
        ctx.toast('success', 'Log settings saved', `Reason: ${reason}`);
      });
    },
  };
  return {
    actions,
    topics: { logs: tails, usage: loaderTopic(usage), logSettings: loaderTopic(settings) },
    dispose: () => {
      usage.dispose();
      settings.dispose();
    },
  };
}
