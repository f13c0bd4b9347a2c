/**
 * The timeline of one task or run: what the audit recorded about it (claims, renewals, steps,
 * retries, expiry, approvals, results), each attempt's log milestones (first line, last line,
 * the cap) and what each attempt spent, merged into one list, oldest first.
 */
import type { TimelineEntry } from '../../common/console-api';
import { isoTime } from '../../common/iso-time';
import type { LogAttempt, UsageTotals } from '../../common/logs';
import type { AuditRow } from '../audit/audit-store';

type Kind = TimelineEntry['kind'];

/** Audit types → timeline kind and plain words. Unknown types keep their own name. */
const AUDIT_WORDS: Record<string, [Kind, string]> = {
  'task.create': ['created', 'Task created'],
  'lock.claim': ['claim', 'Claimed'],
  'lock.renew': ['renew', 'Lock renewed'],
  'lock.release': ['release', 'Reported'],
  'lock.expire': ['expire', 'Lock expired'],
  'lock.reject': ['refused', 'Refused a late or foreign request'],
  'lock.force_release': ['release', 'Released by the operator'],
  'run.claim': ['created', 'Slot claimed'],
  'run.dispatch': ['trigger', 'Dispatched'],
  'run.trigger_now': ['trigger', 'Run now (by hand)'],
  'run.start': ['claim', 'Started'],
  'run.attempt_start': ['claim', 'Attempt started'],
  'run.step': ['step', 'Step done'],
  'run.retry': ['retry', 'Retry scheduled'],
  'run.succeed': ['result', 'Succeeded'],
  'run.fail': ['result', 'Failed'],
  'run.skip': ['result', 'Skipped'],
  'run.needs_human': ['approval', 'Needs a person'],
  'run.approve': ['approval', 'Approved'],
  'run.reject': ['refused', 'Refused'],
  'run.backfilled': ['result', 'Backfilled'],
  'trigger.offer': ['trigger', 'Offered to an agent'],
  'trigger.ack': ['trigger', 'Acknowledged by the agent'],
  'trigger.timeout': ['trigger', 'Not acknowledged in time'],
  'trigger.lost': ['trigger', 'Agent lost'],
  'trigger.cancel': ['refused', 'Attempt taken away'],
};

function auditWords(type: string): [Kind, string] {
  const known = AUDIT_WORDS[type];
  if (known) return known;
  if (type.startsWith('backfill.')) return ['retry', `Backfill: ${type.slice(9).replace(/_/g, ' ')}`];
  if (type.includes('approv')) return ['approval', type.replace(/[._]/g, ' ')];
  return ['other', type.replace(/[._]/g, ' ')];
}

function detailText(type: string, d: Record<string, unknown>): string | null {
  const parts: string[] = [];
  if (typeof d.step === 'string') parts.push(`step ${d.step}`);
  if (typeof d.status === 'string') parts.push(`status ${d.status}`);
  if (typeof d.reason === 'string') parts.push(d.reason);
  if (typeof d.error === 'string') parts.push(d.error);
  if (typeof d.note === 'string' && d.note) parts.push(d.note);
  if (typeof d.expiresAt === 'string' && type === 'lock.renew') parts.push(`until ${d.expiresAt}`);
  return parts.length ? parts.join(' · ') : null;
}

const money = (n: number) => (n >= 1 ? `$${n.toFixed(2)}` : `$${n.toFixed(4)}`);

export function buildTimeline(audit: AuditRow[], attempts: LogAttempt[], usage: Array<UsageTotals & { attempt: number }>): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  for (const row of audit) {
    let d: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(row.detail) as unknown;
      if (parsed && typeof parsed === 'object') d = parsed as Record<string, unknown>;
    } catch {
      // a row whose detail is not JSON still gets its line
    }
    const [kind, title] = auditWords(row.type);
    out.push({
      at: isoTime(row.at),
      kind,
      title,
      attempt: typeof d.attempt === 'number' ? d.attempt : null,
      actor: row.actor,
      auditId: row.id,
      detail: detailText(row.type, d),
    });
  }
  const spent = new Map(usage.map((u) => [u.attempt, u]));
  for (const a of attempts) {
    out.push({ at: a.firstAt, kind: 'log', title: 'First log line', attempt: a.attempt, actor: null, auditId: null, detail: null });
    const u = spent.get(a.attempt);
    const total = `${a.lines} line${a.lines === 1 ? '' : 's'}${a.truncated ? `, cut at the cap (${a.dropped} more dropped)` : ''}`;
    const cost = u ? ` · ${u.inputTokens} tokens in, ${u.outputTokens} out, ${money(u.costUsd)}` : '';
    out.push({ at: a.lastAt, kind: 'log', title: a.truncated ? 'Log reached its cap' : 'Last log line', attempt: a.attempt, actor: null, auditId: null, detail: total + cost });
  }
  for (const u of usage) {
    if (attempts.some((a) => a.attempt === u.attempt)) continue; // told with the attempt's last line
    out.push({ at: '', kind: 'usage', title: 'Usage', attempt: u.attempt, actor: null, auditId: null, detail: `${u.inputTokens} tokens in, ${u.outputTokens} out, ${money(u.costUsd)}` });
  }
  // Stable by time; rows without a time (usage of an attempt with no log) go last.
  return out.map((e, i) => ({ e, i })).sort((x, y) => (x.e.at === y.e.at ? x.i - y.i : !x.e.at ? 1 : !y.e.at ? -1 : x.e.at < y.e.at ? -1 : 1)).map((x) => x.e);
}
