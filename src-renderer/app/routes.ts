/**
 * Hash routes. One table lists every view: its path, nav label, `g`-shortcut and whether it is
 * shown. Adding a view (Jobs, Runs, Why) is one entry here plus its component in App's registry.
 */
import { CONSOLE_VIEWS, type ConsoleView } from '../../src-main/common/console-api';

export type ViewId = 'dashboard' | 'queues' | 'locks' | 'instances' | 'audit' | 'settings' | 'jobs' | 'runs' | 'why' | 'calendars';

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
  { id: 'queues', label: 'Role queues', chord: 'q', icon: '☰', description: 'Tasks per role, by status, with their locks' },
  { id: 'locks', label: 'Expired locks', chord: 'e', icon: '◷', description: 'Locks the watchdog took back today, and who re-claimed them' },
  { id: 'instances', label: 'Instances', chord: 'i', icon: '◉', description: 'Connected agents, their locks, and agent tokens' },
  { id: 'jobs', label: 'Jobs', chord: 'j', icon: '↻', description: 'Periodic jobs owned by Gaffer: schedule, policies, next slots' },
  { id: 'runs', label: 'Runs', chord: 'r', icon: '▦', description: 'Every expected slot and what happened to it; the backfill queue' },
  { id: 'why', label: 'Why didn’t it run?', chord: 'w', icon: '?', description: 'For a job and an instant: each layer’s verdict, with evidence' },
  { id: 'calendars', label: 'Calendars', chord: 'c', icon: '▤', description: 'Business calendars: workdays, holidays, make-up workdays' },
  { id: 'audit', label: 'Audit', chord: 'a', icon: '≡', description: 'Every decision, append-only and hash-chained' },
  { id: 'settings', label: 'Settings', chord: 's', icon: '⚙', description: 'Timings, kill switch, and where Gaffer runs' },
];

export interface Route {
  view: ViewId;
  /** Sub-path parameter: the role for `queues`, an event id for `audit`, … */
  param: string | null;
  /** Query-string style options after `?` in the hash. */
  query: Record<string, string>;
}

export const DEFAULT_ROUTE: Route = { view: 'dashboard', param: null, query: {} };

const VIEW_IDS = new Set<string>(ROUTES.map((r) => r.id));

/** "#/queues/dev?task=12" → { view: 'queues', param: 'dev', query: { task: '12' } }. Unknown → dashboard. */
export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  if (!raw.startsWith('/')) return DEFAULT_ROUTE; // e.g. "#token=…" handed to the transport
  const [pathPart = '', queryPart = ''] = raw.slice(1).split('?', 2);
  const [view = '', ...rest] = pathPart.split('/');
  if (!VIEW_IDS.has(view)) return DEFAULT_ROUTE;
  const param = rest.length ? decodeURIComponent(rest.join('/')) || null : null;
  const query: Record<string, string> = {};
  for (const kv of queryPart.split('&')) {
    if (!kv) continue;
    const [k, v = ''] = kv.split('=', 2);
    if (k) query[decodeURIComponent(k)] = decodeURIComponent(v);
  }
  return { view: view as ViewId, param, query };
}

export function formatHash(r: Partial<Route> & { view: ViewId }): string {
  let h = `#/${r.view}`;
  if (r.param) h += `/${encodeURIComponent(r.param)}`;
  const q = Object.entries(r.query ?? {}).filter(([, v]) => v !== '');
  if (q.length) h += `?${q.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
  return h;
}

/** The shell's view names (Electron's Go menu, Ctrl/Cmd+1…9 in CONSOLE_VIEWS order) mapped to this app's views. */
export function viewForConsoleView(v: ConsoleView): ViewId {
  switch (v) {
    case 'dashboard':
    case 'queues':
    case 'instances':
    case 'jobs':
    case 'runs':
    case 'why':
    case 'calendars':
    case 'audit':
    case 'settings':
      return v;
    case 'expired-locks':
      return 'locks';
  }
}

/** Ctrl/Cmd+n opens the n-th view of CONSOLE_VIEWS, the same binding as Electron's Go menu. */
export function viewForDigit(n: number): ViewId | null {
  const v = CONSOLE_VIEWS[n - 1];
  return v ? viewForConsoleView(v) : null;
}

/** The nav entries shown. */
export function visibleRoutes(): RouteDef[] {
  return ROUTES;
}
