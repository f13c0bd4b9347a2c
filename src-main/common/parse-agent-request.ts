/**
 * An agent's frame, validated once at the boundary (PROTOCOL §1): `agentRequest.safeParse`, with a
 * direct path for the frames every task sends — `claim` (no role), `renew`, `report` (no output)
 * and `heartbeat` — which the schema would spend more time on than JSON.parse (issue 32).
 *
 * Invariants:
 * 1. The direct path accepts only what the schema accepts, and returns what the schema returns:
 *    the same fields, with the same values (the schema strips unknown fields; a frame here has none).
 * 2. Whatever the direct path is not sure of — an unknown or extra field, an `output`, a `role`,
 *    a long id, a value of the wrong type — goes to the schema, which also words every refusal:
 *    a bad frame gets exactly the error it got before.
 */
import { agentRequest, type AgentRequest, type AgentRequestOf } from './protocol';
import { REPORT_STATUSES, type ReportStatus } from './model';
import { isWellFormedText } from './text';

type Parsed = ReturnType<typeof agentRequest.safeParse>;

/** The fields each direct type may carry (a frame with any other goes to the schema). */
const DIRECT: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['report', new Set(['id', 'type', 'taskId', 'fence', 'status', 'note', 'claimNext'])],
  ['renew', new Set(['id', 'type', 'taskId', 'fence'])],
  ['claim', new Set(['id', 'type'])],
  ['heartbeat', new Set(['id', 'type'])],
]);
const STATUSES: ReadonlySet<unknown> = new Set(REPORT_STATUSES);
/** The schema's limits (common/protocol.ts), counted in UTF-16 units: never more than it allows. */
const MAX_ID = 100;
const MAX_NOTE = 10_000;

/** `taskId` / `fence`: a positive safe integer. */
const positive = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

function direct(msg: unknown): AgentRequest | undefined {
  if (typeof msg !== 'object' || msg === null) return undefined;
  const m = msg as Record<string, unknown>;
  const { type, id } = m;
  const fields = typeof type === 'string' ? DIRECT.get(type) : undefined;
  if (fields === undefined) return undefined;
  for (const k in m) if (!fields.has(k)) return undefined;
  if (typeof id === 'number') {
    if (!Number.isSafeInteger(id)) return undefined;
  } else if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID || !isWellFormedText(id)) return undefined;
  switch (type) {
    case 'claim':
    case 'heartbeat':
      return { id, type };
    case 'renew':
      return positive(m.taskId) && positive(m.fence) ? { id, type, taskId: m.taskId, fence: m.fence } : undefined;
    case 'report': {
      const { taskId, fence, status, note, claimNext } = m;
      if (!positive(taskId) || !positive(fence) || !STATUSES.has(status)) return undefined;
      if (note !== undefined && (typeof note !== 'string' || note.length > MAX_NOTE || !isWellFormedText(note))) return undefined;
      if (claimNext !== undefined && typeof claimNext !== 'boolean') return undefined;
      const req: AgentRequestOf<'report'> = { id, type, taskId, fence, status: status as ReportStatus };
      if (note !== undefined) req.note = note;
      if (claimNext !== undefined) req.claimNext = claimNext;
      return req;
    }
  }
  return undefined;
}

/** The frame `msg` (already JSON.parse'd) as a request, or the schema's refusal. */
export function parseAgentRequest(msg: unknown): Parsed {
  const req = direct(msg);
  return req !== undefined ? { success: true, data: req } : agentRequest.safeParse(msg);
}
