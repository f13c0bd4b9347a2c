/**
 * The shell's table of views: nav label, `g`-shortcut, icon and header line, in rail order.
 * Adding a view is an id in `lib/routes.ts`, an entry here and its component in App's registry.
 */
import type { ViewId } from '../lib/routes';

export interface RouteDef {
  id: ViewId;
  label: string;
  /** Second key of the `g x` chord. */
  chord: string;
  icon: string;
  /** One-line description shown in the header. */
  description: string;
}

export const ROUTES: RouteDef[] = [
  { id: 'dashboard', label: 'Dashboard', chord: 'd', icon: '◧', description: 'What is happening now, and what is stuck' },
  { id: 'inbox', label: 'Inbox', chord: 'b', icon: '✉', description: 'Everything that needs you: failed runs and tasks, held runs, blocked tasks, missed slots, stuck queues' },
  { id: 'queues', label: 'Role queues', chord: 'q', icon: '☰', description: 'Tasks per role, by status, with their locks' },
  { id: 'tasks', label: 'Tasks', chord: 't', icon: '⌕', description: 'Find any task by title, payload or id; act on many at once' },
  { id: 'locks', label: 'Expired locks', chord: 'e', icon: '◷', description: 'Locks taken back today — by the watchdog or by an operator — and who re-claimed them' },
  { id: 'instances', label: 'Instances', chord: 'i', icon: '◉', description: 'Connected agents, their locks, and agent tokens' },
  { id: 'managed', label: 'Managed agents', chord: 'm', icon: '▶', description: 'Agent processes Gaffer starts, keeps running and stops with itself' },
  { id: 'jobs', label: 'Jobs', chord: 'j', icon: '↻', description: 'Periodic jobs owned by Gaffer: schedule, policies, next slots' },
  { id: 'runs', label: 'Runs', chord: 'r', icon: '▦', description: 'Every expected slot and what happened to it; the backfill queue' },
  { id: 'why', label: 'Why didn’t it run?', chord: 'w', icon: '?', description: 'For a job and an instant: each layer’s verdict, with evidence' },
  { id: 'signals', label: 'Signals', chord: 'n', icon: '⚑', description: 'Readiness signals jobs wait for: set and clear them per business key' },
  { id: 'calendars', label: 'Calendars', chord: 'c', icon: '▤', description: 'Business calendars: workdays, holidays, make-up workdays' },
  { id: 'audit', label: 'Audit', chord: 'a', icon: '≡', description: 'Every decision, append-only and hash-chained' },
  { id: 'settings', label: 'Settings', chord: 's', icon: '⚙', description: 'Timings, kill switch, and where Gaffer runs' },
];
