/**
 * Artifacts of attempts (PROTOCOL §15): what a task's or run's attempt produced — its workspace's
 * changes (with the diff), a file, a link, a CLI session. Table `artifacts` (migration 022).
 *
 * Invariants:
 * 1. One row per (subject, attempt, kind, name): a repeat of the frame replaces the row (an agent
 *    resending after a blip changes nothing).
 * 2. A workspace's diff arrives in parts (`diffOffset`, each part under the frame limit): a part
 *    starting at 0 replaces the row (summary and diff); a later part must start exactly where the
 *    stored diff ends, else `conflict` (a resent part that is already stored is a harmless repeat);
 *    the diff never grows past MAX_DIFF_CHARS.
 * 3. Writes go through the caller's transaction (the group commit).
 */
import { GafferError } from '../../common/errors';
import { MAX_DIFF_CHARS, type ArtifactKind } from '../../common/protocol';
import type { ArtifactView as ArtifactRecord, ChangeSummary } from '../../common/logs';
import type { Db } from '../db/open';

export type { ArtifactView as ArtifactRecord, ChangeSummary } from '../../common/logs';

export interface ArtifactWrite {
  subject: string;
  attempt: number;
  kind: ArtifactKind;
  name: string;
  data: unknown;
  diff?: string | undefined;
  diffOffset?: number | undefined;
  at: number;
}

interface Row {
  attempt: number;
  kind: ArtifactKind;
  name: string;
  data: string;
  at: number;
  diff_chars: number | null;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export class ArtifactStore {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      upsert: db.prepare(
        `INSERT INTO artifacts (subject, attempt, kind, name, data, diff, at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (subject, attempt, kind, name) DO UPDATE SET data = excluded.data, diff = excluded.diff, at = excluded.at`,
      ),
      diffLength: db.prepare<[string, number, string, string], { n: number | null }>(
        'SELECT length(diff) AS n FROM artifacts WHERE subject = ? AND attempt = ? AND kind = ? AND name = ?',
      ),
      tail: db.prepare<[number, string, number, string, string], { t: string }>(
        'SELECT substr(diff, ?) AS t FROM artifacts WHERE subject = ? AND attempt = ? AND kind = ? AND name = ?',
      ),
      append: db.prepare('UPDATE artifacts SET diff = diff || ? WHERE subject = ? AND attempt = ? AND kind = ? AND name = ?'),
      list: db.prepare<[string], Row>('SELECT attempt, kind, name, data, at, length(diff) AS diff_chars FROM artifacts WHERE subject = ? ORDER BY attempt, id'),
      diff: db.prepare<[string, number], { diff: string | null }>(
        "SELECT diff FROM artifacts WHERE subject = ? AND attempt = ? AND kind = 'workspace' ORDER BY id DESC LIMIT 1",
      ),
      latestWorkspace: db.prepare<[string], { attempt: number; data: string }>(
        "SELECT attempt, data FROM artifacts WHERE subject = ? AND kind = 'workspace' ORDER BY attempt DESC, id DESC LIMIT 1",
      ),
      latestSession: db.prepare<[string], { data: string }>(
        "SELECT data FROM artifacts WHERE subject = ? AND kind = 'session' ORDER BY attempt DESC, id DESC LIMIT 1",
      ),
      lastAttempt: db.prepare<[string], { attempt: number | null }>("SELECT max(attempt) AS attempt FROM artifacts WHERE subject = ? AND kind = 'workspace'"),
    };
  }

  /** Stores a frame (invariants 1 and 2); returns the diff's stored length. */
  put(w: ArtifactWrite): { diffChars?: number } {
    const key = [w.subject, w.attempt, w.kind, w.name] as const;
    const offset = w.diffOffset ?? 0;
    if (w.diff !== undefined && w.kind !== 'workspace') throw new GafferError('bad_request', 'only a workspace artifact carries a diff', { field: 'diff' });
    if (offset === 0) {
      const diff = w.diff === undefined ? null : w.diff.slice(0, MAX_DIFF_CHARS);
      this.q.upsert.run(w.subject, w.attempt, w.kind, w.name, JSON.stringify(w.data), diff, w.at);
      return diff === null ? {} : { diffChars: diff.length };
    }
    const part = w.diff ?? '';
    const stored = this.q.diffLength.get(...key)?.n;
    if (stored === undefined || stored === null) throw new GafferError('conflict', `no diff of ${w.name} to continue: send the part at diffOffset 0 first`, { field: 'diffOffset' });
    if (stored === offset) {
      const room = Math.max(0, MAX_DIFF_CHARS - stored);
      if (room > 0 && part.length > 0) this.q.append.run(part.slice(0, room), ...key);
      return { diffChars: stored + Math.min(room, part.length) };
    }
    // A resent part that is stored already (its acknowledgement was lost): a harmless repeat.
    if (stored >= offset + part.length && this.q.tail.get(offset + 1, ...key)?.t.startsWith(part)) return { diffChars: stored };
    throw new GafferError('conflict', `the diff of ${w.name} has ${stored} characters stored; the next part starts there, not at ${offset}`, { field: 'diffOffset' });
  }

  /** The CLI session id the latest attempt of `subject` reported (kind `session`, `{cli, sessionId}`), if any. */
  latestSession(subject: string): string | undefined {
    const row = this.q.latestSession.get(subject);
    if (!row) return undefined;
    const id = (JSON.parse(row.data) as { sessionId?: unknown }).sessionId;
    return typeof id === 'string' && id !== '' ? id : undefined;
  }

  list(subject: string): ArtifactRecord[] {
    return this.q.list.all(subject).map((r) => ({
      attempt: r.attempt,
      kind: r.kind,
      name: r.name,
      data: JSON.parse(r.data) as Record<string, unknown>,
      at: new Date(r.at).toISOString(),
      ...(r.diff_chars !== null ? { diffChars: r.diff_chars } : {}),
    }));
  }

  /** The workspace diff of `attempt` (default: the latest attempt that has one), or null. */
  diff(subject: string, attempt?: number): { attempt: number; diff: string } | null {
    const a = attempt ?? this.q.lastAttempt.get(subject)?.attempt;
    if (a === undefined || a === null) return null;
    const r = this.q.diff.get(subject, a);
    return r ? { attempt: a, diff: r.diff ?? '' } : null;
  }

  /** The latest workspace figures of each subject that has them. */
  changes(subjects: readonly string[]): Record<string, ChangeSummary> {
    const out: Record<string, ChangeSummary> = {};
    for (const s of subjects) {
      const r = this.q.latestWorkspace.get(s);
      if (!r) continue;
      const d = JSON.parse(r.data) as Record<string, unknown>;
      out[s] = { attempt: r.attempt, filesChanged: num(d.filesChanged), insertions: num(d.insertions), deletions: num(d.deletions) };
    }
    return out;
  }
}
