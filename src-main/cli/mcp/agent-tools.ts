/**
 * The agent-mode tools of `gaffer mcp --role R`: the MCP client *is* a Gaffer agent. Descriptions
 * are written for the model that calls them: what the tool does, when to call it, and what the
 * lock rules (P1–P5) mean for it.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { REPORT_STATUSES } from '../../common/model';
import { ERROR_CLASSES } from '../../common/protocol';
import { SessionError, type AgentSession } from './agent-session';
import { toolCall } from './results';

/** What every agent tool description can rely on the model knowing. */
export const AGENT_INSTRUCTIONS = `You are connected to Gaffer, a scheduler that hands out tasks to agents, as an agent of one role.
The lock rules:
P1 Work on a task only while you hold it: after claim_task gave it to you, until you report it or are told the lock was lost.
P2 "No task" ({"task": null}) is a normal answer, not an error: do not call claim_task again in a tight loop.
P3 Tasks come highest priority first, and only once the tasks they depend on are done.
P4 A lock lasts a window (lockWindowS); this server renews your locks automatically while the session is open.
P5 Only your report_task releases a task, and only while you still hold its lock; a report after the lock was lost is refused and changes nothing.
If a tool answers lock_lost or not_holder for a task, stop working on that task at once: someone else may now hold it.`;

const taskId = z.number().int().positive().describe('The task id (from claim_task).');
const runId = z.string().min(1).max(100).describe('The run id (from next_run).');
const attempt = z
  .number()
  .int()
  .positive()
  .optional()
  .describe('The attempt (from next_run) this call is for; when given, a call for an attempt that is over is refused (run_ended). Default: the current attempt of the run.');

/** Exactly one of taskId / runId: what a log line or usage figure belongs to. */
function target(args: { taskId?: number | undefined; runId?: string | undefined }): { taskId: number } | { runId: string } {
  if ((args.taskId === undefined) === (args.runId === undefined)) throw new SessionError('bad_request', 'give exactly one of taskId (a task you hold) or runId (a run you took)');
  return args.taskId !== undefined ? { taskId: args.taskId } : { runId: args.runId! };
}

export function registerAgentTools(server: McpServer, session: AgentSession, role: string): void {
  server.registerTool(
    'claim_task',
    {
      title: 'Claim the next task',
      description:
        `Claim the next task of role "${role}" from Gaffer. Call it when you are ready to start a new piece of work. ` +
        'Returns {task, lock}: the task (id, title, payload, attempt, previouslyExpired) and its lock (fence, expiresAt); you hold it from now on (P1) and ' +
        'this server renews the lock while the session is open (P4). Returns {"task": null} when nothing is claimable: a normal answer (P2) — ' +
        'do not retry in a loop; say there is no work, or try again later. Tasks come highest priority first, once their dependencies are done (P3). ' +
        'When previouslyExpired is true, an earlier holder lost the lock mid-way: check what it already did before redoing anything. ' +
        'Every claimed task must end with report_task (P5).',
      inputSchema: { role: z.string().min(1).max(64).optional().describe(`Claim for another role than "${role}" (the agent token must allow it). Usually omitted.`) },
      annotations: { destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      toolCall(async () => {
        const claimed = await session.claim(args.role);
        return claimed ? { ...claimed, lockWindowS: session.lockWindowS } : { task: null, hint: 'nothing to claim right now (P2): not an error; do not retry in a loop' };
      }),
  );

  server.registerTool(
    'renew_task',
    {
      title: 'Renew a task lock',
      description:
        'Renew the lock on a task you hold and get its new expiry. Rarely needed: the server already renews held locks (P4). Use it to check that you still hold ' +
        'the task before a step with a side effect. An error lock_lost or not_holder means the task was taken away (lock expired, force-released by the operator, cancelled): ' +
        'stop working on it at once and do not report it.',
      inputSchema: { taskId },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) => toolCall(() => session.renew(args.taskId)),
  );

  server.registerTool(
    'report_task',
    {
      title: 'Report how a task ended',
      description:
        'Finish a task you hold and release its lock — the only way a task is released (P5). status: ' +
        '"done" (finished; output becomes the task\'s output), "failed" (cannot be done; waits for the operator), ' +
        '"blocked" (needs a human or something outside: credentials, a decision; waits for the operator), ' +
        '"backlog" (give it back untouched for another attempt, e.g. after a transient failure). ' +
        'Put a short human-readable reason in note. An error lock_lost means your lock was already gone: the report was not recorded and must not be retried.',
      inputSchema: {
        taskId,
        status: z.enum(REPORT_STATUSES).describe('done | failed | blocked | backlog'),
        note: z.string().max(10_000).optional().describe('A short reason or summary for the operator.'),
        output: z.unknown().optional().describe('Any JSON result (at most 64 KiB), stored as the task\'s output.'),
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      toolCall(() =>
        session.report(args.taskId, {
          status: args.status,
          ...(args.note !== undefined ? { note: args.note } : {}),
          ...(args.output !== undefined ? { output: args.output } : {}),
        }),
      ),
  );

  server.registerTool(
    'held_tasks',
    {
      title: 'Tasks this session holds',
      description: 'List the tasks this session holds right now (claimed, not yet reported, lock not lost), with their fence and lock expiry. Use it to recover your place.',
      inputSchema: {},
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    () => toolCall(async () => ({ tasks: session.heldTasks() })),
  );

  server.registerTool(
    'create_task',
    {
      title: 'Create a task (idempotent)',
      description:
        'Create a task for any role, e.g. to hand a follow-up to another agent. Idempotent: the same idempotencyKey within the server\'s window (5 min by default) ' +
        'returns the first task ({replayed: true}) instead of creating a second, so retrying after an error is safe; the same key with a different body is a conflict. ' +
        'Choose a key that names the intent ("review-pr-1207"), not a random one. dependsOn lists task ids that must be done before this one can be claimed (P3); ' +
        'priority: higher is claimed first (default 0).',
      inputSchema: {
        title: z.string().min(1).max(500),
        role: z.string().min(1).max(64).optional().describe(`The role that will work it (default "${role}").`),
        idempotencyKey: z.string().min(1).max(200).describe('Names the intent; repeats within the window return the first task.'),
        priority: z.number().int().min(-1_000_000).max(1_000_000).optional(),
        payload: z.unknown().optional().describe('Any JSON the worker needs (at most 64 KiB).'),
        dependsOn: z.array(z.number().int().positive()).max(100).optional(),
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) =>
      toolCall(async () => {
        const { task, replayed } = await session.agent.createTask({
          title: args.title,
          idempotencyKey: args.idempotencyKey,
          ...(args.role !== undefined ? { role: args.role } : {}),
          ...(args.priority !== undefined ? { priority: args.priority } : {}),
          ...(args.payload !== undefined ? { payload: args.payload } : {}),
          ...(args.dependsOn !== undefined ? { dependsOn: args.dependsOn } : {}),
        });
        return { task, replayed };
      }),
  );

  server.registerTool(
    'log',
    {
      title: 'Send log lines',
      description:
        'Send log lines about the task you hold or the run you took; the operator reads them in the console beside the task or run. ' +
        'Give exactly one of taskId or runId. Only the current holder may log (not_holder otherwise). A Gaffer too old for log lines answers bad_request.',
      inputSchema: {
        taskId: taskId.optional(),
        runId: runId.optional(),
        lines: z
          .array(
            z.object({
              text: z.string().min(1).max(10_000),
              level: z.enum(['debug', 'info', 'warn', 'error']).optional(),
              stream: z.enum(['stdout', 'stderr', 'agent']).optional(),
            }),
          )
          .min(1)
          .max(1000),
      },
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    (args) => toolCall(() => session.log(target(args), args.lines)),
  );

  server.registerTool(
    'report_usage',
    {
      title: 'Report model usage',
      description:
        'Add tokens and cost spent on the task you hold or the run you took (increments; Gaffer sums them and may stop work that passes a budget). ' +
        'Give exactly one of taskId or runId. Returns the running total. A Gaffer too old for usage reports answers bad_request.',
      inputSchema: {
        taskId: taskId.optional(),
        runId: runId.optional(),
        inputTokens: z.number().int().min(0).optional(),
        outputTokens: z.number().int().min(0).optional(),
        costUsd: z.number().min(0).optional(),
        model: z.string().min(1).max(200).optional(),
      },
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    (args) => {
      const { taskId: t, runId: r, ...figures } = args;
      return toolCall(async () => session.usage(target({ taskId: t, runId: r }), figures));
    },
  );

  if (!session.opts.jobs) return;

  server.registerTool(
    'next_run',
    {
      title: 'Take the next job run',
      description:
        `Take the next scheduled job run Gaffer gave this session (role "${role}"; it is already acknowledged). Returns the run — runId, job, slot, attempt, payload, ` +
        'idempotencyKey, deadline, completedSteps — or {"run": null} when there is none (a normal answer: do not loop). ' +
        'Skip the steps listed in completedSteps (an earlier attempt did them); pass idempotencyKey to every outside system you change, so a retry cannot double an effect. ' +
        'Record each finished step with checkpoint_step and end the run with finish_run before its deadline. ' +
        'A run you failed (or that was taken away) can come back here as a later attempt with the same runId and a higher attempt: it is new work, not a duplicate.',
      inputSchema: {},
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    () => toolCall(async () => ({ run: session.nextRun() })),
  );

  server.registerTool(
    'checkpoint_step',
    {
      title: 'Checkpoint a finished step',
      description:
        'Record that a step of a run is done (its side effect happened), with an optional ref identifying the effect (a message id, a commit). ' +
        'A retried run lists recorded steps in completedSteps, so the next attempt skips them. Call it right after the side effect, before anything else. ' +
        'Answers skipped: true when an earlier attempt already recorded the step.',
      inputSchema: {
        runId,
        step: z.string().min(1).max(200).describe('The step name, stable across attempts ("send-email").'),
        ref: z.string().min(1).max(1000).optional().describe('What identifies the side effect (a message id, a file, a commit).'),
        attempt,
      },
      annotations: { destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    (args) => toolCall(() => session.checkpoint(args.runId, args.step, args.ref, args.attempt)),
  );

  server.registerTool(
    'finish_run',
    {
      title: 'Finish a job run',
      description:
        'End a run you took: outcome "success", or "failed" with errorClass "retryable" (transient: timeouts, rate limits; Gaffer retries with backoff), ' +
        '"fatal" (will not succeed by retrying: held for review) or "needs_human" (money, accounts, security: held, the operator is alerted). ' +
        'error: a short reason; output: any JSON result. A retryable failure may bring the run back to you as a later attempt (next_run).',
      inputSchema: {
        runId,
        outcome: z.enum(['success', 'failed']),
        errorClass: z.enum(ERROR_CLASSES).optional().describe('With outcome "failed" (default retryable).'),
        error: z.string().max(10_000).optional(),
        output: z.unknown().optional(),
        attempt,
      },
      annotations: { destructiveHint: false, openWorldHint: false },
    },
    (args) =>
      toolCall(async () => {
        if (args.outcome === 'success' && args.errorClass !== undefined) throw new SessionError('bad_request', 'errorClass goes with outcome "failed" only');
        return session.finishRun(
          args.runId,
          {
            outcome: args.outcome,
            ...(args.errorClass !== undefined ? { errorClass: args.errorClass } : {}),
            ...(args.error !== undefined ? { error: args.error } : {}),
            ...(args.output !== undefined ? { output: args.output } : {}),
          },
          args.attempt,
        );
      }),
  );
}
