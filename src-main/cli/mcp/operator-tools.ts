/**
 * The operator-mode tools of `gaffer mcp --operator`: read-only questions an assistant answers for
 * the operator, over the HTTP API with the operator token. Nothing here changes Gaffer's state:
 * every tool calls catalogue operations (common/ops) through their GET routes — `opPath` refuses
 * an operation without one, so a tool cannot reach a route that changes anything.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { TASK_STATUSES } from '../../common/model';
import { OPS, type OpName } from '../../common/ops';
import { RUN_STATUSES } from '../../common/job-schema';
import { ApiError, toolCall } from './results';

export const OPERATOR_INSTRUCTIONS = `You are connected read-only to Gaffer, a local scheduler of AI-agent work (tasks handed to agents under locks, and scheduled jobs whose runs go to agents).
Use these tools to answer the operator's questions: how it is doing (gaffer_status), why a job did or did not run at a time (explain_job), what ran and what failed (recent_runs, recent_failures, list_tasks), and who did what when (search_audit).
Times are ISO-8601 instants (2026-11-30T09:00:00Z). You cannot change anything through these tools.`;

type Query = Record<string, string | number | undefined>;

/** A GET on the HTTP API; a refusal becomes an ApiError with the API's code. */
export function apiClient(base: string, token: string): (path: string, query?: Query) => Promise<unknown> {
  return async (path, query = {}) => {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
    const qs = params.toString();
    let res: Response;
    try {
      res = await fetch(`${base}/api/v1${path}${qs ? `?${qs}` : ''}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/json' } });
    } catch (e) {
      throw new ApiError('unavailable', `cannot reach Gaffer at ${base}: ${e instanceof Error ? e.message : String(e)}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError('internal', `Gaffer answered ${res.status} with a body that is not JSON`);
    }
    if (!res.ok) {
      const e = (body as { error?: { code?: string; message?: string } }).error;
      throw new ApiError(e?.code ?? 'internal', e?.message ?? `HTTP ${res.status}`);
    }
    return body;
  };
}

/** The operations the operator tools call (each through its GET route). */
export const OPERATOR_TOOL_OPS = ['status.get', 'jobs.list', 'jobs.explain', 'runs.list', 'runs.get', 'tasks.list', 'tasks.get', 'audit.query'] as const satisfies readonly OpName[];
type ToolOp = (typeof OPERATOR_TOOL_OPS)[number];

/**
 * The path of an operation's GET route, its `:params` filled (percent-encoded). Throws for an
 * operation the operator may not call or that has no GET route: the tools stay read-only.
 */
export function opPath(name: ToolOp, params: Record<string, string> = {}): string {
  const o = OPS[name];
  const route = (o.rest as ReadonlyArray<{ method: string; path: string }>).find((r) => r.method === 'GET');
  if (!route || !(o.callers as readonly string[]).includes('operator')) throw new Error(`operation ${name} has no GET route for the operator`);
  return route.path.replace(/:([^/]+)/g, (_, p: string) => {
    const v = params[p];
    if (v === undefined) throw new Error(`operation ${name}: no value for :${p}`);
    return encodeURIComponent(v);
  });
}

interface RunItem {
  id: string;
  lastError: string | null;
}
interface RunDetail {
  backfills?: Array<{ status: string; lastError: string | null }>;
}

/**
 * The question a run awaiting a decision asks: that of its latest re-run when an approved re-run
 * ended needing a human again (on its backfill), else the run's own last error.
 */
function openQuestion(run: RunItem, detail: RunDetail): string | null {
  const latest = detail.backfills?.at(-1);
  return latest?.status === 'failed' && latest.lastError ? latest.lastError : run.lastError;
}

const limit = z.number().int().min(1).max(200).optional().describe('How many (default 20).');
const instant = z.string().min(1).max(40).describe('An ISO-8601 instant, e.g. 2026-11-30T09:00:00Z.');

export function registerOperatorTools(server: McpServer, get: ReturnType<typeof apiClient>): void {
  const read = { readOnlyHint: true, openWorldHint: false } as const;

  server.registerTool(
    'gaffer_status',
    {
      title: 'Gaffer status',
      description:
        'Health and counts of the scheduler: agent instances online/disconnected/offline, tasks by status, live locks, locks that expired today (agents that died or hung), ' +
        'and the recovery bound (how long an abandoned task can stay stuck). Start here for "is everything all right?".',
      inputSchema: {},
      annotations: read,
    },
    () => toolCall(() => get(opPath('status.get'))),
  );

  server.registerTool(
    'list_jobs',
    {
      title: 'List jobs',
      description: 'The scheduled jobs (name, id, role, schedule, enabled/paused, next trigger, last run). Use it to find a job\'s id or name for explain_job and recent_runs.',
      inputSchema: { role: z.string().min(1).max(64).optional(), limit },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('jobs.list'), { role: args.role, limit: args.limit ?? 20 })),
  );

  server.registerTool(
    'explain_job',
    {
      title: "Why did / didn't a job run",
      description:
        "Answer \"why didn't job J run at T?\" (or why it did): the slot at that time and each layer's verdict — time (schedule, calendar, window, pause), " +
        'preconditions (signals, files, prechecks), execution conditions (overlap, concurrency, kill switch) — and what became of the slot\'s run. ' +
        'job: the job\'s id or name; at: the instant to explain (default now).',
      inputSchema: { job: z.string().min(1).max(200).describe('The job id or name.'), at: instant.optional() },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('jobs.explain', { id: args.job }), { at: args.at })),
  );

  server.registerTool(
    'recent_runs',
    {
      title: 'Recent job runs',
      description: 'Job runs, newest slot first (the slot ledger): status, attempt, disposition (why it ended as it did), last error. Filter by job (id or name) and status.',
      inputSchema: { job: z.string().min(1).max(200).optional(), status: z.enum(RUN_STATUSES).optional(), limit },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('runs.list'), { job: args.job, status: args.status, limit: args.limit ?? 20 })),
  );

  server.registerTool(
    'recent_failures',
    {
      title: 'Recent failures',
      description:
        'What needs the operator, newest first: job runs that ended failed for good (failedRuns: never run again successfully, not being run again, not waiting for a decision), ' +
        'runs held for review that wait for the operator to approve or reject them (awaitingDecision, each with its open question), ' +
        'and tasks that failed or are blocked (waiting for a human). A run that succeeded after an approval or a backfill is settled: it is in none of these. ' +
        'Use it for "what went wrong?" and "what is waiting for me?".',
      inputSchema: { limit },
      annotations: read,
    },
    (args) =>
      toolCall(async () => {
        const n = args.limit ?? 20;
        const items = <T>(page: unknown) => (page as { items: T[] }).items;
        const [runs, awaiting, failed, blocked] = await Promise.all([
          get(opPath('runs.list'), { settled: 'failed', limit: n }),
          get(opPath('runs.list'), { settled: 'awaiting_decision', limit: n }),
          get(opPath('tasks.list'), { status: 'failed', order: 'desc', limit: n }),
          get(opPath('tasks.list'), { status: 'blocked', order: 'desc', limit: n }),
        ]);
        const awaitingDecision = await Promise.all(items<RunItem>(awaiting).map(async (run) => ({ run, question: openQuestion(run, (await get(opPath('runs.get', { id: run.id }))) as RunDetail) })));
        return { failedRuns: items(runs), awaitingDecision, failedTasks: items(failed), blockedTasks: items(blocked) };
      }),
  );

  server.registerTool(
    'list_tasks',
    {
      title: 'List tasks',
      description: 'Tasks on the board, newest first, filtered by role and status (backlog, in_progress, verifying, blocked, done, failed, cancelled); in_progress tasks show who holds the lock; verifying ones said done and Gaffer is running their checks.',
      inputSchema: { role: z.string().min(1).max(64).optional(), status: z.enum(TASK_STATUSES).optional(), limit },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('tasks.list'), { role: args.role, status: args.status, order: 'desc', limit: args.limit ?? 20 })),
  );

  server.registerTool(
    'get_task',
    {
      title: 'One task, with its verification',
      description:
        'One task by id: its status, note, output and, where it declares "done when…" checks, its latest verification ' +
        '(each check with passed, detail, durationMs and the tail of a command\'s output), previousError (why its last attempt did not count) ' +
        'and disposition already_done (the checks found the work done before another attempt was handed out).',
      inputSchema: { taskId: z.number().int().min(1).describe('The task id.') },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('tasks.get', { id: String(args.taskId) }))),
  );

  server.registerTool(
    'get_run',
    {
      title: 'One job run, with its verification',
      description:
        'One run of a job by id: its status, attempt, disposition (already_done when the checks found the work done before a retry went out), ' +
        'output, error, steps and, where the job declares "done when…" checks, its latest verification (each check with passed, detail, durationMs and ' +
        "the tail of a command's output).",
      inputSchema: { runId: z.string().min(1).max(200).describe('The run id.') },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('runs.get', { id: args.runId }))),
  );

  server.registerTool(
    'search_audit',
    {
      title: 'Search the audit log',
      description:
        'Search the append-only audit log, newest first: every claim, renewal, release, expiry, report, operator action and job decision, with its actor and subject. ' +
        'Filters: type (e.g. task.create, lock.claim, lock.renew, lock.release, lock.expire, lock.reject, operator.force_release, run.start, run.fail, run.succeed, verify.pass, verify.fail, task.verified), ' +
        'actor (an instance id, or operator:…), subject (task:12, job:…, run:…), from/to instants, text.',
      inputSchema: {
        type: z.string().min(1).max(200).optional(),
        actor: z.string().min(1).max(200).optional(),
        subject: z.string().min(1).max(200).optional(),
        from: instant.optional(),
        to: instant.optional(),
        text: z.string().min(1).max(200).optional(),
        limit,
      },
      annotations: read,
    },
    (args) => toolCall(() => get(opPath('audit.query'), { ...args, order: 'desc', limit: args.limit ?? 20 })),
  );
}
