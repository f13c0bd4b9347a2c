import { useState } from 'react';
import { recoveryBoundS, type SchedulerConfig } from '../../../src-main/common/config';
import { Badge, Rule } from '../../components/Badge';
import { ReasonDialog } from '../../components/Dialog';
import { LogSettingsPanel } from './LogSettingsPanel';
import { PricesPanel } from './PricesPanel';
import { ErrorBanner, Spinner } from '../../components/States';
import { formatDurationS } from '../../lib/format';
import { useActions, useConsole, useWatch } from '../../store/react';
import { recoveryExplain } from '../../lib/recovery';
import { useTheme, type ThemeChoice } from '../../lib/theme';

interface TimingRow {
  key: keyof SchedulerConfig;
  label: string;
  unit: 's' | 'ms';
  what: string;
}

const TIMINGS: TimingRow[] = [
  { key: 'lockWindowS', label: 'Lock window', unit: 's', what: 'how long a claim or renew holds a task; long tasks renew well before it runs out' },
  { key: 'heartbeatIntervalMs', label: 'Heartbeat interval', unit: 'ms', what: 'how often agents are asked to heartbeat' },
  { key: 'heartbeatTimeoutS', label: 'Heartbeat timeout', unit: 's', what: 'an instance silent this long goes offline and its locks expire' },
  { key: 'sweepIntervalS', label: 'Watchdog sweep', unit: 's', what: 'safety sweep that expires overdue locks and silent instances' },
  { key: 'reconnectGraceS', label: 'Reconnect grace', unit: 's', what: 'a dropped agent may resume with its locks within this time' },
  { key: 'idempotencyWindowS', label: 'Idempotency window', unit: 's', what: 'a repeated idempotency key returns the cached result' },
  { key: 'triggerAckTimeoutS', label: 'Trigger ack timeout', unit: 's', what: 'an unacknowledged job trigger is offered to another instance' },
  { key: 'clockJumpThresholdS', label: 'Clock-jump threshold', unit: 's', what: 'a longer gap between ticks is handled as sleep/clock jump' },
];

export function SettingsView() {
  useWatch('settings');
  const res = useConsole((s) => s.settings);
  const shell = useConsole((s) => s.shell);
  const { refresh, setKillSwitch, setRequireReason } = useActions();
  const [confirm, setConfirm] = useState<boolean | null>(null);
  const [theme, setTheme] = useTheme();
  const s = res.data;
  if (!s) {
    if (res.error) return <ErrorBanner error={res.error} what="Could not load settings" onRetry={() => void refresh('settings')} />;
    return <Spinner label="Loading settings…" />;
  }
  const c = s.config;
  const bound = recoveryBoundS(c);
  const rec = recoveryExplain(bound, c);
  return (
    <div className="view settings" data-testid="view-settings">
      <div className="grid-2">
        <section className={`panel kill ${s.killSwitch ? 'kill-on' : ''}`} data-testid="kill-switch-panel">
          <header className="panel-head">
            <h2>Kill switch</h2>
            <Badge tone={s.killSwitch ? 'failed' : 'online'} strong>
              {s.killSwitch ? 'ON — triggering stopped' : 'off — running normally'}
            </Badge>
          </header>
          <p className="small">
            The switch over every job: while it is on, no job is triggered. One-off tasks already on the board can still be claimed and reported. Turning it on or off
            takes a reason and is audited.
          </p>
          <button className={`btn ${s.killSwitch ? 'btn-primary' : 'btn-danger'}`} onClick={() => setConfirm(!s.killSwitch)} data-testid="kill-switch-toggle">
            {s.killSwitch ? 'Turn the kill switch off' : 'Turn the kill switch on'}
          </button>
        </section>

        <section className="panel">
          <header className="panel-head">
            <h2>Recovery bound</h2>
            <Badge tone="ready" strong>
              {rec.short}
            </Badge>
          </header>
          <p className="small">
            An abandoned task is claimable again after at most <strong>min(lock window, heartbeat timeout) + sweep interval</strong> ={' '}
            <span className="mono">
              min({c.lockWindowS}, {c.heartbeatTimeoutS}) + {c.sweepIntervalS} = {bound} s
            </span>{' '}
            ({formatDurationS(bound)}, kept by the watchdog). The next holder gets <code>previouslyExpired: true</code> and checks for half-done work.
          </p>
        </section>
      </div>

      <section className="panel">
        <header className="panel-head">
          <h2>Timings</h2>
          <span className="muted small">from the configuration Gaffer started with (command line or defaults)</span>
        </header>
        <div className="timings" data-testid="timings">
          {TIMINGS.map((t) => (
            <div className="timing" key={t.key}>
              <div className="timing-label">
                {t.label}
              </div>
              <div className="timing-value mono">
                {c[t.key].toLocaleString('en-US')} {t.unit}
                {t.unit === 's' && c[t.key] >= 60 ? <span className="muted"> ({formatDurationS(c[t.key])})</span> : null}
              </div>
              <div className="timing-what muted small">{t.what}</div>
            </div>
          ))}
        </div>
        <p className="small muted">
          Rules: <Rule id="P1" /> no claim, no work · <Rule id="P2" /> a failed claim is a skip · <Rule id="P3" /> dependencies gate the claim · <Rule id="P4" /> lock window and renewal ·{' '}
          <Rule id="P5" /> release only via status report (409 for a non-holder).
        </p>
      </section>

      <div className="grid-2">
        <section className="panel">
          <header className="panel-head">
            <h2>This Gaffer</h2>
          </header>
          <dl className="kv">
            <dt>Version</dt>
            <dd className="mono">{s.version}</dd>
            <dt>Shell</dt>
            <dd>{shell === 'electron' ? 'desktop app (Electron)' : 'browser, served by headless Gaffer'}</dd>
            <dt>Port</dt>
            <dd className="mono">{s.port ?? '—'}</dd>
            <dt>Agent socket</dt>
            <dd className="mono">{s.port !== null ? `ws://127.0.0.1:${s.port}/agent` : '—'}</dd>
            <dt>Data directory</dt>
            <dd className="mono wrap">{s.dataDir ?? '—'}</dd>
            <dt>API reference</dt>
            <dd className="mono wrap" data-testid="api-reference">
              {s.port === null ? (
                '—'
              ) : shell === 'electron' ? (
                // The desktop window opens only https links; this one is for a browser on this machine.
                <span title="open it in a browser on this machine">{`http://127.0.0.1:${s.port}/api/v1/openapi.json`}</span>
              ) : (
                <a href="/api/v1/openapi.json" target="_blank" rel="noreferrer">
                  /api/v1/openapi.json (OpenAPI)
                </a>
              )}
            </dd>
          </dl>
        </section>
        <section className="panel">
          <header className="panel-head">
            <h2>Appearance</h2>
          </header>
          <div className="seg" role="radiogroup" aria-label="Theme">
            {(['system', 'dark', 'light'] as ThemeChoice[]).map((t) => (
              <button key={t} role="radio" aria-checked={theme === t} className={`seg-btn${theme === t ? ' active' : ''}`} onClick={() => setTheme(t)}>
                {t === 'system' ? 'Follow system' : t === 'dark' ? 'Dark' : 'Light'}
              </button>
            ))}
          </div>
        </section>
      </div>

      <section className="panel" data-testid="reason-setting">
        <header className="panel-head">
          <h2>Reasons</h2>
        </header>
        <label className="check">
          <input type="checkbox" checked={s.requireReason} onChange={(e) => void setRequireReason(e.target.checked)} data-testid="require-reason" /> Require a reason for actions
        </label>
        <p className="small muted">
          {s.requireReason
            ? 'Every action that changes work (cancel, retry, pause, the kill switch…) asks why, and the audit log records the answer.'
            : 'Off: a reason is optional — handy when you are the only operator. An action without one is recorded in the audit log as “no reason given”. Turn it on when several people share this Gaffer.'}
        </p>
      </section>

      <LogSettingsPanel />
      <PricesPanel />

      {confirm !== null ? (
        <ReasonDialog
          title={confirm ? 'Turn the kill switch ON' : 'Turn the kill switch off'}
          explain={confirm ? 'No job will be triggered until it is turned off again.' : 'Jobs are triggered again as they fall due; missed slots follow each job’s missed-window policy.'}
          confirmLabel={confirm ? 'Stop triggering' : 'Resume triggering'}
          danger={confirm}
          testId="dialog-kill-switch"
          onConfirm={(reason) => setKillSwitch(confirm, reason)}
          onClose={() => setConfirm(null)}
        />
      ) : null}
    </div>
  );
}
