/**
 * Managed agents (PROTOCOL §7): processes Gaffer starts and keeps running. The reason is optional on
 * every surface (the HTTP API and the core never demanded one; the console asks for one anyway).
 */
import { z } from 'zod';
import { MANAGED_ACTIONS, MAX_MANAGED_INSTANCES, managedAgentInput, managedAgentPatch, type ManagedAction, type ManagedAgent } from '../managed-agents';
import { reason } from '../schemas';
import { op } from './define';
import { managedAgent, page } from './shapes';
import { empty } from './tasks';

const BOTH = ['console', 'operator'] as const;
/** The managed agent's id or name. */
const ref = z.string().min(1).max(200);
const reply = z.object({ managedAgent });
const AGENT = { 200: '`{managedAgent}`' };

const CONTROL_SUMMARIES: Record<ManagedAction, string> = {
  start: 'Start the managed agent (Gaffer then keeps it running, also across its own restarts), or one stopped instance.',
  stop: 'Stop the managed agent or one instance: it takes no new work, finishes or hands back what it has, and is not restarted.',
  restart: 'Restart the managed agent or one instance, rolling: a new process starts; once it is up the old one is drained.',
};

export const managedOps = {
  'managedAgents.list': op<ManagedAgent[]>()({
    summary: 'The managed agents, each with its processes (pid, status, uptime, restarts, last exit, instance).',
    input: empty,
    result: z.array(managedAgent),
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/managed-agents', status: { 200: '`{items, next}`' }, response: page(managedAgent) }],
  }),
  /** One agent, with each process's recent output. */
  'managedAgents.get': op<ManagedAgent>()({
    summary: 'One managed agent, with the recent output of each process.',
    input: z.strictObject({ id: ref }),
    result: managedAgent,
    callers: BOTH,
    reason: 'none',
    rest: [{ method: 'GET', path: '/managed-agents/:id', status: AGENT, response: reply }],
  }),
  'managedAgents.create': op<ManagedAgent>()({
    summary: 'Define a managed agent: Gaffer mints its token, starts its processes and keeps them running.',
    input: z.strictObject({ definition: managedAgentInput, reason: reason.optional() }),
    result: managedAgent,
    callers: BOTH,
    reason: 'optional',
    rest: [
      {
        method: 'POST',
        path: '/managed-agents',
        description:
          '`mode: per_task` (default) runs each instance as `gaffer agent` around `command`; `long_running` runs `command` as an agent itself, with GAFFER_URL and GAFFER_TOKEN in its environment.',
        status: { 201: '`{managedAgent}`' },
        response: reply,
      },
    ],
  }),
  'managedAgents.update': op<ManagedAgent>()({
    summary: 'Change a managed agent without restarting Gaffer: a new command etc. rolls (new process up, old one drained); `instances` adds or drains processes.',
    input: z.strictObject({ id: ref, patch: managedAgentPatch, reason: reason.optional() }),
    result: managedAgent,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'PATCH', path: '/managed-agents/:id', status: AGENT, response: reply }],
  }),
  'managedAgents.delete': op<ManagedAgent>()({
    summary: 'Delete a managed agent: its processes stop (their work is handed back), its token is revoked. The reason comes from `?reason=` or the body.',
    input: z.strictObject({ id: ref, reason: reason.optional() }),
    result: managedAgent,
    callers: BOTH,
    reason: 'optional',
    rest: [{ method: 'DELETE', path: '/managed-agents/:id', status: AGENT, response: reply }],
  }),
  /** Start / stop / restart the agent, or one of its instances (1-based). */
  'managedAgents.control': op<ManagedAgent>()({
    summary: 'Start, stop or restart a managed agent, or one of its instances.',
    input: z.strictObject({ id: ref, action: z.enum(MANAGED_ACTIONS), instance: z.number().int().min(1).max(MAX_MANAGED_INSTANCES).optional(), reason: reason.optional() }),
    result: managedAgent,
    callers: BOTH,
    reason: 'optional',
    rest: MANAGED_ACTIONS.map((action) => ({ method: 'POST' as const, path: `/managed-agents/:id/${action}`, summary: CONTROL_SUMMARIES[action], status: AGENT, response: reply })),
  }),
} as const;
