/**
 * The editor's "Rehearse" tab: the job's five scenarios (normal day, data delay, downstream
 * timeout, process restart, cross-day backfill) as timelines side by side, each ending in its
 * plain verdict, with the moment that would surprise the operator highlighted. The rehearsal runs
 * on the server (`jobs.rehearse`) on the real engine in a throw-away world; this only shows it.
 *
 * 1. Times are the job's local times (its zone), with the day said once where it changes.
 * 2. A scenario that ends badly says so in its verdict's tone and in words, never by colour alone;
 *    its slot ledger (disposition and attempts per slot) follows the verdict.
 * 3. Columns sit side by side where they fit and wrap below one another where they do not; each
 *    column scrolls on its own, so one long timeline does not push the others away.
 */
import type { RehearsalEvent, RehearsalResult, RehearsalScenario } from '../../../src-main/common/rehearsal';
import { Badge } from '../../components/Badge';
import { ErrorBanner, Spinner } from '../../components/States';
import type { UiError } from '../../lib/errors';
import { dispositionMeta } from '../../lib/run-words';
import { dayAndTime } from './logic';

/** The kinds of moment, in the timeline's words (a short tag before each line). */
const KIND_WORDS: Record<RehearsalEvent['kind'], string> = {
  trigger: 'due',
  check: 'check',
  wait: 'waiting',
  dispatch: 'sent',
  start: 'started',
  step: 'step',
  retry: 'retry',
  success: 'success',
  failed: 'failed',
  missed: 'missed',
  skipped: 'skipped',
  fold: 'folded',
  backfill: 'backfill',
  alert: 'alert',
  hold: 'held',
  approval: 'approval',
  agent: 'agent',
  gaffer: 'Gaffer',
  data: 'data',
};

const TONE: Partial<Record<RehearsalEvent['kind'], string>> = {
  success: 'ok',
  failed: 'bad',
  missed: 'bad',
  retry: 'warn',
  alert: 'warn',
  hold: 'warn',
  fold: 'info',
  backfill: 'info',
  gaffer: 'info',
  data: 'info',
};

export interface RehearsePanelProps {
  result: RehearsalResult | null;
  error: UiError | null;
  loading: boolean;
  /** The shown rehearsal is of an earlier version of the settings (a new one is on its way). */
  stale: boolean;
  /** Why nothing can be rehearsed yet (the settings have errors), or null. */
  blocked: string | null;
  /** Ask again (after an error). */
  onRetry: () => void;
}

export function RehearsePanel({ result, error, loading, stale, blocked, onRetry }: RehearsePanelProps) {
  return (
    <section className="rehearse" data-testid="rehearse-panel" aria-label="Rehearsal" aria-busy={loading}>
      <header className="rehearse-head">
        <p className="small muted">
          Each scenario runs the job’s real schedule, window, calendar, retry, missed-window and overlap settings on a private copy of the scheduler, with made-up data, agents and downtime. Nothing is saved, sent to an agent or checked for real.
        </p>
        {loading ? <span className="spinner spinner-small" role="status" aria-label="rehearsing" /> : null}
        {result && !loading ? (
          <span className="muted small" data-testid="rehearse-elapsed">
            rehearsed in {result.elapsedMs < 1000 ? `${result.elapsedMs} ms` : `${(result.elapsedMs / 1000).toFixed(1)} s`} · times in {result.timezone}
          </span>
        ) : null}
      </header>
      {blocked ? (
        <p className="field-error" data-testid="rehearse-blocked">
          {blocked}
        </p>
      ) : error ? (
        <ErrorBanner error={error} what="Could not rehearse the job" onRetry={onRetry} />
      ) : !result ? (
        <Spinner label="Rehearsing the five scenarios…" />
      ) : (
        <div className={`rehearse-grid${stale ? ' stale' : ''}`}>
          {result.scenarios.map((s) => (
            <ScenarioColumn key={s.name} s={s} zone={result.timezone} />
          ))}
        </div>
      )}
    </section>
  );
}

function ScenarioColumn({ s, zone }: { s: RehearsalScenario; zone: string }) {
  let lastDay = '';
  return (
    <article className={`panel rehearse-col${s.endsWell ? '' : ' ends-badly'}`} data-testid={`rehearse-${s.name}`} data-outcome={s.outcome} aria-labelledby={`rehearse-title-${s.name}`}>
      <h3 id={`rehearse-title-${s.name}`} className="rehearse-title">
        {s.title}
      </h3>
      <p className="small muted rehearse-story">{s.story}</p>
      <ol className="rehearse-events" tabIndex={0} aria-label={`${s.title}: what happens`}>
        {s.events.map((e, i) => {
          const { day, time } = dayAndTime(e.at, zone);
          const showDay = day !== lastDay;
          lastDay = day;
          return (
            <li key={i} className={`rehearse-event tone-${TONE[e.kind] ?? 'plain'}${e.surprise ? ' surprise' : ''}`} data-kind={e.kind} data-surprise={e.surprise ? 'true' : undefined}>
              {showDay ? <div className="rehearse-day">{day}</div> : null}
              <span className="mono rehearse-time">{time}</span>
              <span className="rehearse-kind">{KIND_WORDS[e.kind]}</span>
              <span className="rehearse-detail">
                {e.surprise ? <strong className="rehearse-flag">Surprise: </strong> : null}
                {e.detail}
              </span>
            </li>
          );
        })}
      </ol>
      <footer className="rehearse-verdict" data-testid="rehearse-verdict">
        <div className={s.endsWell ? 'text-ok' : 'text-bad'}>
          <strong>{s.endsWell ? '✓ ' : '✗ '}</strong>
          {s.verdict}
        </div>
        {s.surprise ? (
          <p className="small rehearse-surprise" data-testid="rehearse-surprise">
            ⚠ {s.surprise}
          </p>
        ) : null}
        <ul className="rehearse-ledger small" aria-label={`${s.title}: the slots`} data-testid="rehearse-ledger">
          {s.ledger.map((l) => (
            <li key={l.slot}>
              <span className="mono">{l.slot}</span> <Badge tone={dispositionMeta(l.disposition).tone}>{dispositionMeta(l.disposition).label}</Badge>
              {l.attempts ? <span className="muted"> {l.attempts === 1 ? '1 attempt' : `${l.attempts} attempts`}</span> : null}
            </li>
          ))}
        </ul>
      </footer>
    </article>
  );
}
