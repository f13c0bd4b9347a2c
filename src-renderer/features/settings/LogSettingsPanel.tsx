/** Settings: how much log Gaffer keeps (caps per attempt, retention by age and size) and what it holds now. */
import { useEffect, useState } from 'react';
import { LOG_SETTINGS_LIMITS, type LogSettings } from '../../../src-main/common/logs';
import { ReasonDialog } from '../../components/Dialog';
import { formatBytes, formatCount, formatDateTime } from '../../lib/format';
import { useActions, useConsole, useWatch } from '../../store/react';

/** Each setting as the operator edits it: a number in a friendly unit. */
const FIELDS: Array<{ key: keyof LogSettings; label: string; unit: string; factor: number }> = [
  { key: 'retentionDays', label: 'Keep logs for', unit: 'days', factor: 1 },
  { key: 'maxTotalMb', label: 'Keep at most', unit: 'MiB of logs in all', factor: 1 },
  { key: 'maxLinesPerAttempt', label: 'Lines per attempt', unit: 'lines', factor: 1 },
  { key: 'maxBytesPerAttempt', label: 'Size per attempt', unit: 'MiB', factor: 1024 * 1024 },
  { key: 'maxLineBytes', label: 'Longest line', unit: 'KiB (longer lines are cut)', factor: 1024 },
  { key: 'logBytesPerSecondPerToken', label: 'Log rate per agent token', unit: 'KiB/s (faster lines are refused; the SDKs resend)', factor: 1024 },
  { key: 'logBurstBytesPerToken', label: 'Burst per agent token', unit: 'MiB at once', factor: 1024 * 1024 },
  { key: 'minFreeDiskMb', label: 'Keep free on the disk', unit: 'MiB at least (or the database’s size, if more); below it log lines are refused', factor: 1 },
];

export function LogSettingsPanel() {
  useWatch('logSettings');
  const view = useConsole((s) => s.logSettings.data);
  const { setLogSettings } = useActions();
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [asking, setAsking] = useState(false);
  useEffect(() => {
    if (view) setDraft(Object.fromEntries(FIELDS.map((f) => [f.key, String(Math.round((view.settings[f.key] / f.factor) * 100) / 100)])));
  }, [view]);
  if (!view) return null;
  const patch: Partial<LogSettings> = {};
  const problems: string[] = [];
  for (const f of FIELDS) {
    const n = Math.round(Number(draft[f.key]) * f.factor);
    const { min, max } = LOG_SETTINGS_LIMITS[f.key];
    if (!Number.isFinite(n) || n < min || n > max) problems.push(`${f.label}: between ${formatCount(Math.ceil(min / f.factor))} and ${formatCount(Math.floor(max / f.factor))} ${f.unit}`);
    else if (n !== view.settings[f.key]) patch[f.key] = n;
  }
  const changed = Object.keys(patch).length > 0;
  return (
    <section className="panel" data-testid="log-settings">
      <header className="panel-head">
        <h2>Logs</h2>
        <span className="muted small">
          {formatCount(view.storage.lines)} lines · {formatBytes(view.storage.bytes)} in {view.storage.segments} file{view.storage.segments === 1 ? '' : 's'}
          {view.storage.oldestAt ? ` · since ${formatDateTime(view.storage.oldestAt)}` : ''}
        </span>
      </header>
      {view.storage.refusing ? (
        <p className="small error-text" role="alert" data-testid="log-refusing">
          {view.storage.refusing.message}
        </p>
      ) : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (changed && problems.length === 0) setAsking(true);
        }}
      >
        <div className="log-settings-grid">
        {FIELDS.map((f) => (
          <label key={f.key} className="log-field">
            <span>{f.label}</span>
            <span className="log-field-row">
              <input type="number" min={0} step="any" value={draft[f.key] ?? ''} onChange={(e) => setDraft({ ...draft, [f.key]: e.target.value })} aria-describedby={`unit-${f.key}`} />{' '}
              <span id={`unit-${f.key}`} className="small muted">
                {f.unit}
              </span>
            </span>
          </label>
        ))}
        </div>
        {problems.length ? (
          <ul className="small error-text" role="alert">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        <p className="small muted">Old logs go a whole file at a time (one file a day or every 64 MiB), oldest first, and at once when the logs reach their size as lines are written. Past an attempt’s cap, one line says so and later lines are only counted.</p>
        <div>
          <button type="submit" className="btn" disabled={!changed || problems.length > 0}>
            Save
          </button>
        </div>
      </form>
      {asking ? (
        <ReasonDialog
          title="Change how much log is kept"
          explain="Lower limits apply at once: older log files beyond them are deleted."
          confirmLabel="Save"
          testId="dialog-log-settings"
          onConfirm={(reason) => setLogSettings(patch, reason)}
          onClose={() => setAsking(false)}
        />
      ) : null}
    </section>
  );
}
