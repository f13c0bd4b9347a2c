/**
 * PROTOCOL §16: answering a run. When the operator approves a held run (or unblocks a blocked
 * task), the next attempt gets their note — the answer to the agent's question — as
 * GAFFER_APPROVAL_NOTE, and the CLI conversation that asked it as GAFFER_RESUME_SESSION, so a
 * recipe continues the same conversation (`claude --resume "$GAFFER_RESUME_SESSION" -p
 * "$GAFFER_APPROVAL_NOTE"`, `codex exec resume "$GAFFER_RESUME_SESSION" "$GAFFER_APPROVAL_NOTE"`).
 *
 * Invariants:
 * 1. The session is the last one an adapter (`--parse`) reported for that task or run; a work
 *    item with no session, or no note, gets no variable (a recipe tests for it being set).
 * 2. Memory is bounded: the oldest sessions are forgotten past MAX_SESSIONS.
 */

const MAX_SESSIONS = 1000;

/** The key of a task or run across its attempts. */
export const workKey = (kind: 'task' | 'job', id: string): string => `${kind}:${id}`;

export class SessionMemory {
  private readonly sessions = new Map<string, string>();

  remember(key: string, sessionId: string): void {
    this.sessions.delete(key); // re-inserted: the newest stays last
    this.sessions.set(key, sessionId);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value!);
  }

  get(key: string): string | undefined {
    return this.sessions.get(key);
  }
}

/** The variables of an answered attempt (invariant 1). */
export function resumeVariables(note: string | undefined, session: string | undefined): Record<string, string> {
  return {
    ...(note !== undefined && note !== '' ? { GAFFER_APPROVAL_NOTE: note } : {}),
    ...(session ? { GAFFER_RESUME_SESSION: session } : {}),
  };
}
