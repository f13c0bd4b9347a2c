import type { ReactNode } from 'react';
import type { InstanceStatus, Task } from '../../src-main/common/model';
import { BOARD_STATUS_META, boardStatus, INSTANCE_STATUS_META, type BoardStatus } from '../lib/status';

export function Badge({ tone = 'neutral', children, title, strong }: { tone?: string; children: ReactNode; title?: string; strong?: boolean }) {
  return (
    <span className={`badge tone-${tone}${strong ? ' badge-strong' : ''}`} title={title}>
      {children}
    </span>
  );
}

export function TaskStatusBadge({ task, status }: { task?: Pick<Task, 'status' | 'unmetDependencies'>; status?: BoardStatus }) {
  const s = status ?? (task ? boardStatus(task) : 'backlog');
  const m = BOARD_STATUS_META[s];
  return (
    <Badge tone={m.tone} title={m.hint}>
      <span className="dot" aria-hidden />
      {m.label}
    </Badge>
  );
}

export function InstanceStatusBadge({ status }: { status: InstanceStatus | string }) {
  const m = (INSTANCE_STATUS_META as Record<string, { label: string; tone: string } | undefined>)[status] ?? { label: status, tone: 'offline' };
  return (
    <Badge tone={m.tone}>
      <span className="dot" aria-hidden />
      {m.label}
    </Badge>
  );
}

/** A rule reference from SPEC §2 (P1–P5), shown wherever the rule explains what the operator sees. */
export function Rule({ id, children }: { id: 'P1' | 'P2' | 'P3' | 'P4' | 'P5'; children?: ReactNode }) {
  const text: Record<string, string> = {
    P1: 'P1 — No claim, no work: the lock row is the assignment.',
    P2: 'P2 — A failed claim means skip: no retry storms, no waiting on a lock.',
    P3: 'P3 — Dependency gating happens at claim time.',
    P4: 'P4 — Lock window (default 7200 s); long tasks renew about every 30 min.',
    P5: 'P5 — Release only via status report; a non-holder or stale fence is refused with 409.',
  };
  return (
    <abbr className="rule" title={text[id]}>
      {id}
      {children}
    </abbr>
  );
}
