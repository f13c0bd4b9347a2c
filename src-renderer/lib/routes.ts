/**
 * Hash routes: which views exist and how a route reads in the address bar. The shell's table of
 * views (labels, chords, icons) is `app/views.ts`; features only name a view and navigate to it.
 */
import { CONSOLE_VIEWS, type ConsoleView } from '../../src-main/common/console-api';

export const VIEW_IDS = ['dashboard', 'inbox', 'queues', 'tasks', 'locks', 'instances', 'managed', 'jobs', 'runs', 'why', 'signals', 'calendars', 'audit', 'settings'] as const;
export type ViewId = (typeof VIEW_IDS)[number];

export interface Route {
  view: ViewId;
  /** Sub-path parameter: the role for `queues`, an event id for `audit`, … */
  param: string | null;
  /** Query-string style options after `?` in the hash. */
  query: Record<string, string>;
}

/** A place in the console, named for a button or a link ("Open the run"). */
export interface RouteLink {
  label: string;
  view: ViewId;
  param?: string | null;
  query?: Record<string, string>;
}

export const DEFAULT_ROUTE: Route = { view: 'dashboard', param: null, query: {} };

const KNOWN = new Set<string>(VIEW_IDS);

/** "#/queues/dev?task=12" → { view: 'queues', param: 'dev', query: { task: '12' } }. Unknown → dashboard. */
export function parseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '');
  if (!raw.startsWith('/')) return DEFAULT_ROUTE; // e.g. "#token=…" handed to the transport
  const [pathPart = '', queryPart = ''] = raw.slice(1).split('?', 2);
  const [view = '', ...rest] = pathPart.split('/');
  if (!KNOWN.has(view)) return DEFAULT_ROUTE;
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
    case 'inbox':
    case 'queues':
    case 'instances':
    case 'jobs':
    case 'runs':
    case 'why':
    case 'calendars':
    case 'audit':
    case 'settings':
    case 'tasks':
    case 'signals':
      return v;
    case 'expired-locks':
      return 'locks';
    case 'managed-agents':
      return 'managed';
  }
}

/** Ctrl/Cmd+n opens the n-th view of CONSOLE_VIEWS, the same binding as Electron's Go menu. */
export function viewForDigit(n: number): ViewId | null {
  const v = CONSOLE_VIEWS[n - 1];
  return v ? viewForConsoleView(v) : null;
}
