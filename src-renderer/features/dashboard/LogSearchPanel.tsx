/** Words across every task's and run's log, newest first; a hit opens its task or run. */
import { useState, type FormEvent } from 'react';
import type { LogSearchHit } from '../../../src-main/common/console-api';
import { AnsiText } from '../../components/logs/AnsiText';
import { formatDateTime } from '../../lib/format';
import { navigate } from '../../lib/navigation';
import { useActions } from '../../store/react';

function open(h: LogSearchHit): void {
  if (h.owner?.kind === 'task') navigate('queues', h.owner.role, { task: String(h.owner.taskId) });
  else if (h.owner?.kind === 'run') navigate('runs', h.owner.jobId, { slot: h.owner.slot });
}

export function LogSearchPanel({ now }: { now: number }) {
  const { searchLogs } = useActions();
  const [q, setQ] = useState('');
  const [hits, setHits] = useState<LogSearchHit[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (!q.trim()) return;
    setBusy(true);
    try {
      setHits(await searchLogs(q.trim()));
      setError(null);
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="panel" data-testid="log-search">
      <header className="panel-head">
        <h2>Find in every log</h2>
      </header>
      <form className="log-search-form" onSubmit={(e) => void submit(e)}>
        <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder="Words, e.g. timeout payment" aria-label="Words to find in every log" />
        <button type="submit" className="btn" disabled={busy || !q.trim()}>
          {busy ? 'Searching…' : 'Find'}
        </button>
      </form>
      {error ? <p className="small error-text">{error}</p> : null}
      {hits === null ? (
        <p className="small muted">Finds whole words (the last one may be the start of a word). Lines logged in the last second may not be found yet.</p>
      ) : hits.length === 0 ? (
        <p className="small muted">No line has these words.</p>
      ) : (
        <ol className="plain-list small log-hits">
          {hits.map((h) => (
            <li key={`${h.subject}:${h.seq}`}>
              <button className="link" onClick={() => open(h)} disabled={!h.owner}>
                {h.owner?.kind === 'task' ? `Task #${h.owner.taskId} ${h.owner.title}` : h.owner?.kind === 'run' ? `${h.owner.job} ${h.owner.slot}` : `${h.subject} (gone)`}
              </button>{' '}
              <span className="muted">
                attempt {h.attempt} · line {h.seq} · {formatDateTime(h.at, now)}
              </span>
              <div className="mono log-hit-text">
                <AnsiText text={h.text} />
              </div>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
