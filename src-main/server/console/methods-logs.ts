/**
 * The console's log, usage and timeline methods (`logs.*`, `usage.*`), over `core.logs`.
 * Arguments arrive validated (methods.ts); a task or run that does not exist is `not_found`.
 */
import type { ConsoleInput, ConsoleMethod, ConsoleResult, LogSearchHit, LogSettingsView, SubjectUsage } from '../../common/console-api';
import { GafferError } from '../../common/errors';
import type { LogSubject } from '../../common/logs';
import type { Core } from '../../core/create-core';
import { buildTimeline } from '../../core/logs/timeline';
import { localWeekStart } from './read-models';

export type LogsMethod = Extract<ConsoleMethod, `logs.${string}` | `usage.${string}`>;
type Args<M extends ConsoleMethod> = ConsoleInput<M>;
export type LogsHandlers = { [M in LogsMethod]: (args: Args<M>) => ConsoleResult<M> | Promise<ConsoleResult<M>> };

/** The download cap of `logs.text` (the HTTP download has no cap). */
const TEXT_CAP_BYTES = 64 * 1024 * 1024;
const DAY_MS = 24 * 3600 * 1000;
const TIMELINE_AUDIT_ROWS = 2000;

export function createLogsHandlers(core: Core, actor: string): LogsHandlers {
  /** Checks the task or run exists (else not_found). */
  const known = (subject: string): LogSubject => {
    if (subject.startsWith('task:')) core.tasks.get(Number(subject.slice(5)));
    else core.jobs.getRun(subject.slice(4));
    return subject as LogSubject;
  };
  const taskOwner = core.reads.tasks.owner;
  const runOwner = core.reads.runs.owner;
  const ownerOf = (subject: string): LogSearchHit['owner'] => {
    if (subject.startsWith('task:')) {
      const taskId = Number(subject.slice(5));
      const t = taskOwner(taskId);
      return t ? { kind: 'task', taskId, ...t } : null;
    }
    const runId = subject.slice(4);
    const r = runOwner(runId);
    return r ? { kind: 'run', runId, ...r } : null;
  };
  const settingsView = async (): Promise<LogSettingsView> => ({ settings: core.logs.settings(), storage: await core.logs.storage() });
  const range = (from: string | undefined, to: string | undefined, defaultFrom: (now: number) => number) => {
    const now = core.clock.now();
    const end = to ? Date.parse(to) : now + 1;
    const start = from ? Date.parse(from) : defaultFrom(now);
    if (start >= end) throw new GafferError('bad_request', '"from" must be before "to"', { field: 'from' });
    return [start, end] as const;
  };

  return {
    'logs.artifacts': ({ subject }) => core.logs.artifactsOf(known(subject)),
    'logs.diff': ({ subject, attempt }) => core.logs.diffOf(known(subject), attempt),
    'logs.changes': ({ subjects }) => core.logs.changesOf(subjects),
    'logs.attempts': async ({ subject }) => {
      known(subject);
      const usage = new Map(core.logs.usagePerAttempt(subject).map((u) => [u.attempt, u]));
      const attempts = (await core.logs.attempts(subject)).map((a) => {
        const u = usage.get(a.attempt);
        return { ...a, usage: { inputTokens: u?.inputTokens ?? 0, outputTokens: u?.outputTokens ?? 0, costUsd: u?.costUsd ?? 0 } };
      });
      return { attempts, usage: core.logs.usageOf(subject) };
    },
    'logs.page': ({ subject, limit, ...rest }) => {
      known(subject);
      return core.logs.read({ subject, limit: limit ?? 500, ...rest });
    },
    'logs.text': async ({ subject, attempt }) => {
      known(subject);
      let text = '';
      let complete = true;
      for await (const chunk of core.logs.text(subject, attempt)) {
        if (text.length + chunk.length > TEXT_CAP_BYTES) {
          complete = false;
          break;
        }
        text += chunk;
      }
      return { filename: `gaffer-${subject.replace(':', '-').replace(/[^\w.-]/g, '_')}-attempt-${attempt}.log`, text, complete };
    },
    'logs.search': async ({ q, limit }) => {
      const hits = await core.logs.search(q, limit ?? 100);
      return { items: hits.map((h) => ({ ...h, owner: ownerOf(h.subject) })) };
    },
    'logs.timeline': async ({ subject }) => {
      known(subject);
      const audit = core.auditQuery.oldestAbout([subject], TIMELINE_AUDIT_ROWS);
      return buildTimeline(audit, await core.logs.attempts(subject), core.logs.usagePerAttempt(subject));
    },
    'logs.settings': () => settingsView(),
    'logs.setSettings': async ({ settings, reason }) => {
      core.logs.setSettings(settings, { actor, reason });
      return settingsView();
    },
    'usage.summary': ({ by, from, to, role, job }) => {
      const [start, end] = range(from, to, (now) => now - 14 * DAY_MS);
      return core.logs.usageSummary(by, start, end, { ...(role ? { role } : {}), ...(job ? { job } : {}) });
    },
    'usage.daily': ({ from, to }) => {
      const [start, end] = range(from, to, (now) => now - 14 * DAY_MS);
      return core.logs.dailyUsage(start, end);
    },
    'usage.costliestRuns': ({ from, to, limit }) => {
      const [start, end] = range(from, to, (now) => localWeekStart(now));
      return core.logs.costliestRuns(start, end, limit ?? 10);
    },
    // Unknown subjects are left out (a row deleted meanwhile), not an error for the whole list.
    'usage.ofSubjects': async ({ subjects }) => {
      const out: Record<string, SubjectUsage> = {};
      for (const subject of new Set(subjects)) {
        const attempts = await core.logs.attempts(subject);
        const latest = attempts[attempts.length - 1];
        out[subject] = { usage: core.logs.usageOf(subject), latestAttemptMs: latest ? Date.parse(latest.lastAt) - Date.parse(latest.firstAt) : null };
      }
      return out;
    },
  };
}
