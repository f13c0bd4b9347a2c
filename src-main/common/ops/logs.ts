/** Logs, timelines and usage (PROTOCOL §5). */
import { z } from 'zod';
import {
  LOG_SETTINGS_LIMITS,
  LOG_STREAMS,
  USAGE_GROUPS,
  type ArtifactView,
  type ChangeSummary,
  type CostlyRun,
  type DailyUsage,
  type LogAttempt,
  type LogLine,
  type LogPage,
  type LogSettings,
  type LogStorageStats,
  type UsageRow,
  type UsageTotals,
} from '../logs';
import { reason, roleName } from '../schemas';
import { op } from './define';
import { artifactView, changeSummary, costlyRun, dailyUsage, logAttempt, logLine, logPage, logRefusal, usageRow, usageTotals } from './shapes';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;
const CONSOLE = ['console'] as const;
const instant = z.iso.datetime({ offset: true });
const jobRef = z.string().min(1).max(200);

/** One attempt tab of a log pane: its lines' range and what it spent. */
export interface LogAttemptView extends LogAttempt {
  usage: UsageTotals;
}
/** A list row's usage (all attempts) and its latest attempt's span, first to last log line (null: no line). */
export interface SubjectUsage {
  usage: UsageTotals;
  latestAttemptMs: number | null;
}
export interface LogAttemptsResult {
  attempts: LogAttemptView[];
  /** All attempts together. */
  usage: UsageTotals;
}
export interface LogSearchHit extends LogLine {
  subject: string;
  /** Whose log: enough to show it and to open it. Null when the task or run is gone. */
  owner: { kind: 'task'; taskId: number; role: string; title: string } | { kind: 'run'; runId: string; jobId: string; job: string; slot: string } | null;
}
/** One row of the timeline of a task or run: from the audit trail, the log and the usage. */
export interface TimelineEntry {
  at: string;
  kind: 'created' | 'claim' | 'renew' | 'release' | 'expire' | 'refused' | 'step' | 'retry' | 'approval' | 'trigger' | 'result' | 'log' | 'usage' | 'other';
  /** Plain words for the row. */
  title: string;
  attempt: number | null;
  /** Who did it (an instance, the operator, Gaffer itself). */
  actor: string | null;
  /** The audit row's id, when the row comes from the audit. */
  auditId: number | null;
  detail: string | null;
}
export interface LogSettingsView {
  settings: LogSettings;
  storage: LogStorageStats;
}

const logAttemptView = logAttempt.extend({ usage: usageTotals });
const searchHit = logLine.extend({ subject: z.string() });
const timelineEntry = z.object({
  at: z.string(),
  kind: z.enum(['created', 'claim', 'renew', 'release', 'expire', 'refused', 'step', 'retry', 'approval', 'trigger', 'result', 'log', 'usage', 'other']),
  title: z.string(),
  attempt: z.number().nullable(),
  actor: z.string().nullable(),
  auditId: z.number().nullable(),
  detail: z.string().nullable(),
});
const logSettingsView = z.object({
  settings: z.object(Object.fromEntries(Object.keys(LOG_SETTINGS_LIMITS).map((k) => [k, z.number()])) as { [K in keyof LogSettings]: z.ZodNumber }),
  storage: z.object({ segments: z.number(), bytes: z.number(), lines: z.number(), oldestAt: z.string().nullable(), refusing: logRefusal.nullable().optional() }),
});

/** `task:<id>` or `run:<id>`: whose log. */
export const logSubject = z.string().regex(/^(task:[1-9]\d{0,14}|run:[^\s]{1,100})$/, 'must be task:<id> or run:<id>');
const logSettingsPatch = z.strictObject(
  Object.fromEntries(Object.entries(LOG_SETTINGS_LIMITS).map(([k, l]) => [k, z.number().int().min(l.min).max(l.max).optional()])) as {
    [K in keyof LogSettings]: z.ZodOptional<z.ZodNumber>;
  },
);
const perKind = <R>(make: (kind: 'tasks' | 'runs', one: string) => R): R[] => [make('tasks', 'task'), make('runs', 'run')];

export const logOps = {
  'logs.attempts': op<LogAttemptsResult>()({
    summary: 'The attempts of a task’s or run’s log: line ranges, cap, usage.',
    input: z.strictObject({ subject: logSubject }),
    result: z.object({ attempts: z.array(logAttemptView), usage: usageTotals }),
    callers: BOTH,
    reason: 'none',
    rest: perKind((kind, one) => ({
      method: 'GET' as const,
      path: `/${kind}/:id/logs/attempts`,
      summary: `The attempts of a ${one}'s log: line ranges, cap, usage.`,
      status: { 200: '`{items: [attempt], next: null}`' },
      response: z.object({ items: z.array(logAttemptView), next: z.null() }),
    })),
  }),
  /** A page of lines, oldest first; `contains` keeps the lines holding the text (any case). */
  'logs.page': op<LogPage>()({
    summary: 'A page of a task’s or run’s log lines, oldest first (PROTOCOL §5); filter by attempt, stream and text.',
    input: z.strictObject({
      subject: logSubject,
      after: z.number().int().min(0).optional(),
      limit: z.number().int().min(1).max(5000).optional(),
      attempt: z.number().int().min(1).optional(),
      stream: z.enum(LOG_STREAMS).optional(),
      contains: z.string().min(1).max(500).optional(),
    }),
    result: logPage,
    callers: BOTH,
    reason: 'none',
    rest: perKind((kind, one) => ({
      method: 'GET' as const,
      path: `/${kind}/:id/logs`,
      summary: `A page of a ${one}'s log lines, oldest first (PROTOCOL §5); filter by attempt, stream and text.`,
      status: { 200: '`{items: [{seq, at, attempt, stream, level, text, cutFrom?, marker?, kind?, data?}], next}`' },
    })),
  }),
  /** A whole attempt as text (for a download). */
  'logs.text': op<{ filename: string; text: string; complete: boolean }>()({
    summary: 'A whole attempt of a log as text (for a download; capped at 64 MiB).',
    input: z.strictObject({ subject: logSubject, attempt: z.number().int().min(1) }),
    result: z.object({ filename: z.string(), text: z.string(), complete: z.boolean() }),
    callers: CONSOLE,
    reason: 'none',
  }),
  'logs.download': op<string>()({
    summary: 'A whole attempt of a task’s or run’s log as a text file (streamed).',
    input: z.strictObject({ subject: logSubject, attempt: z.number().int().min(1) }),
    result: z.string(),
    callers: ['operator'],
    reason: 'none',
    rest: perKind((kind, one) => ({
      method: 'GET' as const,
      path: `/${kind}/:id/logs/download`,
      summary: `A whole attempt of a ${one}'s log as a text file (streamed).`,
      status: { 200: 'the attempt as text, one `<at> <stream> <text>` line per log line' },
      response: null,
      mediaTypes: ['text/plain'],
    })),
  }),
  /** Words across every log, newest first. */
  'logs.search': op<{ items: LogSearchHit[] }>()({
    summary: 'Words across every log, newest first (the word index lags new lines by about a second).',
    input: z.strictObject({ q: z.string().trim().min(1).max(500), limit: z.number().int().min(1).max(500).optional() }),
    result: z.object({
      items: z.array(
        searchHit.extend({
          owner: z.union([
            z.object({ kind: z.literal('task'), taskId: z.number(), role: z.string(), title: z.string() }),
            z.object({ kind: z.literal('run'), runId: z.string(), jobId: z.string(), job: z.string(), slot: z.string() }),
            z.null(),
          ]),
        }),
      ),
    }),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/logs/search', status: { 200: '`{items: [{subject, seq, …}], next: null}`' }, response: z.object({ items: z.array(searchHit), next: z.null() }) }],
  }),
  'logs.timeline': op<TimelineEntry[]>()({
    summary: 'The timeline of a task or run: its audit trail, log attempts and usage in one list.',
    input: z.strictObject({ subject: logSubject }),
    result: z.array(timelineEntry),
    callers: CONSOLE,
    reason: 'none',
  }),
  /** What the attempts produced (PROTOCOL §15): workspaces, files, links, sessions. */
  'logs.artifacts': op<ArtifactView[]>()({
    summary: 'What a task’s or run’s attempts produced (PROTOCOL §15): workspaces, files, links, sessions.',
    input: z.strictObject({ subject: logSubject }),
    result: z.array(artifactView),
    callers: BOTH,
    reason: 'none',
    rest: perKind((kind, one) => ({
      method: 'GET' as const,
      path: `/${kind}/:id/artifacts`,
      summary: `What a ${one}'s attempts produced (PROTOCOL §15): workspaces (branch, base, head, commits, files changed, insertions, deletions), files, links, sessions.`,
      status: { 200: '`{items: [{attempt, kind, name, data, at, diffChars?}], next: null}`, oldest attempt first' },
      response: z.object({ items: z.array(artifactView), next: z.null() }),
    })),
  }),
  /** A workspace's unified diff for an attempt (default: the latest that has one); null when none. */
  'logs.diff': op<{ attempt: number; diff: string } | null>()({
    summary: 'The unified diff of a task’s or run’s workspace (PROTOCOL §15) for an attempt (default: the latest that has one); at most 1 MiB.',
    input: z.strictObject({ subject: logSubject, attempt: z.number().int().min(1).optional() }),
    result: z.object({ attempt: z.number(), diff: z.string() }).nullable(),
    callers: BOTH,
    reason: 'none',
    rest: perKind((kind, one) => ({
      method: 'GET' as const,
      path: `/${kind}/:id/diff`,
      summary: `The unified diff of a ${one}'s workspace (PROTOCOL §15) for an attempt (default the latest that has one); at most 1 MiB.`,
      status: { 200: 'the diff as text (empty when nothing changed; header `x-gaffer-attempt`); 404 when the attempt has no workspace' },
      response: null,
      mediaTypes: ['text/x-diff'],
    })),
  }),
  /** The latest workspace figures of each of these tasks / runs (the lists' "+12 −3 in 2 files"). */
  'logs.changes': op<Record<string, ChangeSummary>>()({
    summary: 'The latest workspace figures of each of these tasks or runs (files changed, insertions, deletions).',
    input: z.strictObject({ subjects: z.array(logSubject).max(1000) }),
    result: z.record(z.string(), changeSummary),
    callers: CONSOLE,
    reason: 'none',
  }),
  'logs.settings': op<LogSettingsView>()({
    summary: 'Log caps and retention, with what the log store holds now.',
    input: empty,
    result: logSettingsView,
    callers: CONSOLE,
    reason: 'none',
  }),
  'logs.setSettings': op<LogSettingsView>()({
    summary: 'Change log caps and retention (audited with the reason).',
    input: z.strictObject({ settings: logSettingsPatch, reason }),
    result: logSettingsView,
    callers: CONSOLE,
    reason: 'required',
  }),
  /** Sums in [from, to) (default: the last 14 days) by role, job or local day. */
  'usage.summary': op<UsageRow[]>()({
    summary: 'Tokens and cost summed by role, job or local day (default: the last 30 days, by day).',
    input: z.strictObject({ by: z.enum(USAGE_GROUPS), from: instant.optional(), to: instant.optional(), role: roleName.optional(), job: jobRef.optional() }),
    result: z.array(usageRow),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/usage', status: { 200: '`{items: [{key, inputTokens, outputTokens, costUsd}]}`' }, response: z.object({ items: z.array(usageRow) }) }],
  }),
  /** Sums per local day, role and job in [from, to) (default: the last 14 days), for charts. */
  'usage.daily': op<DailyUsage[]>()({
    summary: 'Tokens and cost per local day, role and job (default: the last 14 days), for charts.',
    input: z.strictObject({ from: instant.optional(), to: instant.optional() }),
    result: z.array(dailyUsage),
    callers: CONSOLE,
    reason: 'none',
  }),
  /** The runs that cost most in [from, to) (default: this week). */
  'usage.costliestRuns': op<CostlyRun[]>()({
    summary: 'The runs that cost most (default: this week).',
    input: z.strictObject({ from: instant.optional(), to: instant.optional(), limit: z.number().int().min(1).max(100).optional() }),
    result: z.array(costlyRun),
    callers: CONSOLE,
    reason: 'none',
  }),
  /** Usage (all attempts) and how long the latest attempt ran, for the rows of a list (Tasks, Runs). */
  'usage.ofSubjects': op<Record<string, SubjectUsage>>()({
    summary: 'Usage (all attempts) and how long the latest attempt ran, for the rows of a list (Tasks, Runs).',
    input: z.strictObject({ subjects: z.array(logSubject).min(1).max(200) }),
    result: z.record(z.string(), z.object({ usage: usageTotals, latestAttemptMs: z.number().nullable() })),
    callers: CONSOLE,
    reason: 'none',
  }),
} as const;
