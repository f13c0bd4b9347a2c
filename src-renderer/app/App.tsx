import { useEffect, useRef, useState, type ComponentType } from 'react';
import { Dialog } from '../components/Dialog';
import { AuditView } from '../features/audit/AuditView';
import { DashboardView } from '../features/dashboard/DashboardView';
import { InboxView } from '../features/inbox/InboxView';
import { InstancesView } from '../features/instances/InstancesView';
import { ManagedAgentsView } from '../features/managed/ManagedAgentsView';
import { CalendarsView } from '../features/calendars/CalendarsView';
import { JobsView } from '../features/jobs/JobsView';
import { RunsView } from '../features/runs/RunsView';
import { WhyView } from '../features/why/WhyView';
import { ExpiredLocksView } from '../features/locks/ExpiredLocksView';
import { QueuesView } from '../features/queues/QueuesView';
import { SettingsView } from '../features/settings/SettingsView';
import { SignalsView } from '../features/signals/SignalsView';
import { TasksView } from '../features/queues/TasksView';
import { useConsole, useWatch } from '../store/react';
import { RelativeTime } from '../components/Time';
import { formatCount } from '../lib/format';
import { navigate, useRoute } from '../lib/navigation';
import type { ViewId } from '../lib/routes';
import { CommandPalette } from './CommandPalette';
import { digitsFor, handleKey, initialChordState, shortcutList } from './shortcuts';
import { SignIn } from './SignIn';
import { Toasts } from './Toasts';
import { ROUTES } from './views';

/** View registry: adding a view is an entry in routes.ts and one here. */
const VIEWS: Record<ViewId, ComponentType> = {
  dashboard: DashboardView,
  inbox: InboxView,
  queues: QueuesView,
  tasks: TasksView,
  locks: ExpiredLocksView,
  instances: InstancesView,
  managed: ManagedAgentsView,
  jobs: JobsView,
  runs: RunsView,
  why: WhyView,
  signals: SignalsView,
  calendars: CalendarsView,
  audit: AuditView,
  settings: SettingsView,
};

function isField(t: EventTarget | null): boolean {
  if (!(t instanceof HTMLElement)) return false;
  const tag = t.tagName;
  return tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT' || t.isContentEditable;
}

export function App() {
  const route = useRoute();
  const [help, setHelp] = useState(false);
  const [palette, setPalette] = useState(false);
  const chord = useRef(initialChordState());
  const [pendingG, setPendingG] = useState(false);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented) return;
      // Dialogs own the keyboard while open.
      if (document.querySelector('[role="dialog"]') && e.key !== 'Escape') return;
      const r = handleKey(chord.current, { key: e.key, ctrlKey: e.ctrlKey, metaKey: e.metaKey, altKey: e.altKey, shiftKey: e.shiftKey, inField: isField(e.target), at: performance.now() }, ROUTES);
      chord.current = r.state;
      setPendingG(r.state.pendingG !== null);
      const a = r.action;
      if (!a) return;
      switch (a.kind) {
        case 'navigate':
          e.preventDefault();
          navigate(a.view);
          document.querySelector<HTMLElement>('main')?.focus({ preventScroll: true });
          break;
        case 'focusFilter': {
          const el = document.querySelector<HTMLInputElement>('main [data-view-filter]');
          if (el) {
            e.preventDefault();
            el.focus();
            el.select();
          }
          break;
        }
        case 'help':
          e.preventDefault();
          setHelp(true);
          break;
        case 'palette':
          e.preventDefault();
          setPalette(true);
          break;
        case 'escape': {
          if (isField(e.target)) {
            (e.target as HTMLElement).blur();
            break;
          }
          const close = document.querySelector<HTMLElement>('main [data-pane-close]');
          close?.click();
          break;
        }
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  const signedOut = useConsole((s) => s.shell === 'browser' && s.conn.lastError?.code === 'unauthorized');
  const View = VIEWS[route.view];
  const def = ROUTES.find((r) => r.id === route.view)!;
  return (
    <div className="app">
      <NavRail current={route.view} />
      <div className="main-col">
        <Header title={def.label} description={def.description} pendingG={pendingG} onHelp={() => setHelp(true)} />
        <StorageBanner />
        <main tabIndex={-1} className="content" key={route.view}>
          {signedOut ? <SignIn /> : <View />}
        </main>
      </div>
      {help ? <ShortcutHelp onClose={() => setHelp(false)} /> : null}
      {palette ? <CommandPalette onClose={() => setPalette(false)} onHelp={() => setHelp(true)} /> : null}
      <Toasts />
    </div>
  );
}

function NavRail({ current }: { current: ViewId }) {
  const dash = useConsole((s) => s.dashboard.data);
  const badge = (id: ViewId): string | null => {
    if (!dash) return null;
    if (id === 'locks' && dash.expiredLocksToday > 0) return formatCount(dash.expiredLocksToday);
    if (id === 'instances') return String(dash.onlineInstances);
    if (id === 'runs' && dash.runsNeedingAttention > 0) return formatCount(dash.runsNeedingAttention);
    if (id === 'inbox' && dash.inbox.open > 0) return formatCount(dash.inbox.open);
    return null;
  };
  return (
    <nav className="rail" aria-label="Views">
      <div className="brand" title="Gaffer — who works on what, and when">
        <span className="brand-mark">G</span>
        <span className="brand-name">Gaffer</span>
      </div>
      {ROUTES.map((r) => (
        <a
          key={r.id}
          href={`#/${r.id}`}
          className={`rail-item${current === r.id ? ' active' : ''}`}
          aria-current={current === r.id ? 'page' : undefined}
          title={`${r.label} — g ${r.chord}${digitsFor(r.id).length ? ` · Ctrl/⌘ ${digitsFor(r.id)[0]}` : ''}`}
          data-testid={`nav-${r.id}`}
        >
          <span className="rail-icon" aria-hidden>
            {r.icon}
          </span>
          <span className="rail-label">{r.label}</span>
          {badge(r.id) ? (
            <span className={`rail-badge${r.id === 'inbox' && (dash?.inbox.critical ?? 0) > 0 ? ' rail-badge-critical' : ''}`} aria-label={r.id === 'inbox' ? `${badge(r.id)} open` : undefined} data-testid={`nav-badge-${r.id}`}>
              {badge(r.id)}
            </span>
          ) : null}
          <kbd className="rail-kbd">g {r.chord}</kbd>
        </a>
      ))}
      <div className="rail-foot muted small">
        <kbd>?</kbd> <span className="rail-foot-text">shortcuts</span>
      </div>
    </nav>
  );
}

function Header({ title, description, pendingG, onHelp }: { title: string; description: string; pendingG: boolean; onHelp: () => void }) {
  useWatch('dashboard');
  const conn = useConsole((s) => s.conn);
  const dash = useConsole((s) => s.dashboard.data);
  const kill = dash?.killSwitch ?? false;
  return (
    <header className="topbar">
      <div className="topbar-title">
        <h1>{title}</h1>
        <span className="muted small">{description}</span>
      </div>
      <span className="spacer" />
      {pendingG ? <kbd className="chord">g …</kbd> : null}
      {kill ? (
        <button
          className="pill pill-bad"
          onClick={() => navigate('settings')}
          data-testid="kill-indicator"
          title={dash?.killSwitchBy ? `Turned on by ${dash.killSwitchBy.by} at ${dash.killSwitchBy.at}: ${dash.killSwitchBy.reason}. No job is triggered.` : 'The kill switch is on: no job is triggered'}
        >
          ■ KILL SWITCH ON{dash?.killSwitchBy ? ` · ${dash.killSwitchBy.by}` : ''}
        </button>
      ) : (
        <span className="pill pill-quiet" data-testid="kill-indicator" title="Kill switch off">
          kill switch off
        </span>
      )}
      {dash ? (
        <span className="pill pill-quiet" title="online instances">
          <span className={`dot ${dash.onlineInstances > 0 ? 'tone-online' : 'tone-offline'}`} /> {dash.onlineInstances} online
        </span>
      ) : null}
      <span className={`pill conn-${conn.status}`} data-testid="conn-status" title={conn.lastError ? `${conn.lastError.code}: ${conn.lastError.message}` : 'live updates'}>
        <span className="dot" />
        {conn.status === 'live' ? 'live' : conn.status === 'connecting' ? 'connecting…' : conn.status === 'reconnecting' ? 'reconnecting…' : `offline (${conn.lastError?.code ?? 'network'})`}
        {conn.lastEventAt ? (
          <span className="muted small">
            {' '}
            · <RelativeTime at={conn.lastEventAt} />
          </span>
        ) : null}
      </span>
      <button className="icon-btn" onClick={onHelp} aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)">
        ?
      </button>
    </header>
  );
}

/** While writes are refused, or the audit log is not to be trusted, every view says so (the dashboard, which the header watches, carries it). */
function StorageBanner() {
  const storage = useConsole((s) => s.dashboard.data?.storage ?? null);
  if (!storage) return null;
  const bad = storage.state !== 'failing';
  const headline = { fault: 'Gaffer has stopped saving changes.', failing: 'The disk is refusing changes.', tampered: 'The audit log was changed outside Gaffer.' }[storage.state];
  return (
    <div className={`callout ${bad ? 'callout-bad' : 'callout-warn'} storage-banner`} role="alert" data-testid="storage-banner">
      <strong>{headline}</strong>
      <span>{storage.message}</span>
      <span className="muted small">
        Since <RelativeTime at={storage.since} />.
      </span>
    </div>
  );
}

function ShortcutHelp({ onClose }: { onClose: () => void }) {
  return (
    <Dialog title="Keyboard shortcuts" onClose={onClose} testId="shortcut-help">
      <table className="shortcuts">
        <tbody>
          {shortcutList(ROUTES).map((s) => (
            <tr key={s.what}>
              <td>
                {s.keys.map((k) => (
                  <kbd key={k}>{k}</kbd>
                ))}
              </td>
              <td>{s.what}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </Dialog>
  );
}
