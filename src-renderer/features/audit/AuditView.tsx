import { useCallback, useEffect, useMemo, useRef, type KeyboardEvent } from 'react';
import type { AuditEvent } from '../../../src-main/common/model';
import { navigate, useViewRoute } from '../../lib/navigation';
import { Badge } from '../../components/Badge';
import { EmptyState, ErrorBanner, ProgressBar, Spinner } from '../../components/States';
import { RelativeTime } from '../../components/Time';
import { VirtualList } from '../../components/VirtualList';
import { formatBytes, formatCount, formatDateTime, formatDurationS, prettyJson, shortHash, summariseDetail } from '../../lib/format';
import { auditTone } from '../../lib/status';
import { useActions, useConsole, useWatch } from '../../store/react';
import { formFromRouteQuery, formToRouteQuery, isFiltered, type AuditFilterForm } from '../../lib/audit-query';
import { exportFraction, subjectLink } from './logic';

const ROW_H = 30;
/** The type picker: whole families first (`lock.*`), then types Gaffer writes, then any seen in the list. */
const TYPE_FAMILIES = ['lock.*', 'operator.*', 'task.*', 'token.*', 'job.*', 'run.*', 'backfill.*', 'calendar.*', 'signal.*'];
export const KNOWN_AUDIT_TYPES = [
  'task.create',
  'lock.claim',
  'lock.renew',
  'lock.release',
  'lock.reject',
  'lock.expire',
  'operator.force_release',
  'operator.cancel',
  'operator.retry',
  'operator.unblock',
  'operator.reprioritise',
  'token.create',
  'token.revoke',
  'signal.set',
  'signal.clear',
  'clock.jump',
  'operator.kill_switch',
  'job.create',
  'job.update',
  'job.pause',
  'job.resume',
  'job.trigger',
  'run.claim',
  'run.step',
  'run.needs_human',
];

export function AuditView() {
  // Instances: an actor typed by name is read as its id.
  useWatch('audit', 'instances');
  const route = useViewRoute('audit');
  const a = useConsole((s) => s.audit);
  const actions = useActions();
  const { setAuditForm, selectAudit, loadMoreAudit, setAuditFollowing } = actions;

  // The URL carries the filter (shareable; Back undoes a filter). URL → form: on arrival and on
  // Back/Forward, the form becomes exactly what the URL names, so nothing leaks in from an
  // earlier visit. Form → URL: each filter that applies is a history step.
  const linkKey = JSON.stringify(formFromRouteQuery(route.query));
  const appliedKey = JSON.stringify(formFromRouteQuery(formToRouteQuery(a.form)));
  const lastLink = useRef<string | null>(null);
  useEffect(() => {
    if (lastLink.current === linkKey) return;
    lastLink.current = linkKey;
    if (linkKey !== appliedKey) setAuditForm(JSON.parse(linkKey) as AuditFilterForm, { immediate: true });
    // Only a URL change drives this effect; the form's own changes go the other way below.
  }, [linkKey, setAuditForm]);
  const queryKey = JSON.stringify(a.query);
  const arrived = useRef(false);
  useEffect(() => {
    // On arrival the URL decides (above); the form of an earlier visit must not be written back.
    if (!arrived.current) {
      arrived.current = true;
      return;
    }
    const want = JSON.stringify(formFromRouteQuery(formToRouteQuery(a.form)));
    if (want === lastLink.current) return;
    lastLink.current = want;
    navigate('audit', route.param, formToRouteQuery(a.form));
    // Follows the applied query, not each keystroke.
  }, [queryKey]);
  const seenTypes = useMemo(() => [...new Set(a.items.slice(0, 500).map((e) => e.type))].filter((t) => !KNOWN_AUDIT_TYPES.includes(t)).sort(), [a.items]);

  const selectedIndex = useMemo(() => (a.selectedId === null ? -1 : a.items.findIndex((e) => e.id === a.selectedId)), [a.items, a.selectedId]);
  const selected = selectedIndex >= 0 ? a.items[selectedIndex]! : null;
  const onEnd = useCallback(() => void loadMoreAudit(), [loadMoreAudit]);
  const canMore = a.next !== null && !a.loading && !a.error;
  const listRef = useRef<HTMLDivElement | null>(null);

  const onListKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'Home' && e.key !== 'End') return;
    e.preventDefault();
    if (a.items.length === 0) return;
    let i = selectedIndex;
    if (e.key === 'ArrowDown') i = Math.min(a.items.length - 1, i + 1);
    else if (e.key === 'ArrowUp') i = Math.max(0, i - 1);
    else if (e.key === 'Home') i = 0;
    else i = a.items.length - 1;
    selectAudit(a.items[i]!.id);
  };

  const field = (k: keyof AuditFilterForm, label: string, placeholder: string, extra?: { list?: string; type?: string; filter?: boolean; width?: string }) => (
    <label className="ffield" style={extra?.width ? { width: extra.width } : undefined}>
      <span>{label}</span>
      <input
        name={`audit-${k}`}
        type={extra?.type ?? 'text'}
        value={a.form[k]}
        placeholder={placeholder}
        list={extra?.list}
        data-view-filter={extra?.filter ? true : undefined}
        onChange={(e) => setAuditForm({ [k]: e.target.value }, { immediate: extra?.type === 'datetime-local' })}
        onKeyDown={(e) => {
          if (e.key === 'Enter') actions.applyAuditFilterNow();
        }}
      />
    </label>
  );

  const filtered = isFiltered(a.query);

  return (
    <div className="view audit" data-testid="view-audit">
      <div className="filterbar" role="search">
        {field('text', 'Text', 'search in details  ( / )', { filter: true, width: '210px' })}
        {field('type', 'Type', 'lock.*, task.create', { list: 'audit-types', width: '180px' })}
        <datalist id="audit-types">
          {[...TYPE_FAMILIES, ...KNOWN_AUDIT_TYPES, ...seenTypes].map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        {field('actor', 'Actor', 'operator, instance name', { width: '150px' })}
        {field('subject', 'Subject', 'task:42 or 42', { width: '140px' })}
        {field('from', 'From', '', { type: 'datetime-local', width: '180px' })}
        {field('to', 'To', '', { type: 'datetime-local', width: '180px' })}
        <button className="btn btn-small btn-ghost" onClick={() => actions.resetAuditFilter()} disabled={!filtered && !a.formError} data-testid="audit-reset">
          Reset
        </button>
      </div>
      {a.formError ? <div className="field-error">{a.formError}</div> : null}
      {a.formNotes.length ? (
        <div className="muted small" data-testid="audit-filter-notes">
          {a.formNotes.join(' · ')}
        </div>
      ) : null}

      <ExportStatus />
      <VerifyStatus />

      <div className="statusline muted small" data-testid="audit-status">
        <span>
          {formatCount(a.items.length)} event{a.items.length === 1 ? '' : 's'} loaded{filtered ? ' (filtered)' : ''}, newest first
          {a.next !== null ? ' · scroll for older' : a.items.length ? ' · end of log' : ''}
        </span>
        {a.loading ? (
          <span>
            <span className="spinner spinner-small" /> {a.partial ? 'scanning older rows for matches…' : 'loading…'}
          </span>
        ) : null}
        {a.firstPageMs !== null ? <span data-testid="audit-first-page-ms">first page {Math.round(a.firstPageMs)} ms</span> : null}
        {a.total ? (
          <span data-testid="audit-total">
            {a.total.exact ? '' : '≥ '}
            {formatCount(a.total.count)} matching
          </span>
        ) : null}
        <span className="spacer" />
        {a.following ? (
          <span className="live-dot" title="new events appear at the top">
            following live
          </span>
        ) : a.unseen > 0 ? (
          <button className="btn btn-small btn-primary" onClick={() => void actions.showUnseenAudit()} data-testid="audit-unseen">
            {formatCount(a.unseen)} new — show
          </button>
        ) : (
          <span>paused while scrolled</span>
        )}
        <div className="btn-group">
          <button className="btn btn-small" onClick={() => void actions.exportAudit('jsonl')} disabled={a.export.running} data-testid="export-jsonl" title="Export the filtered range, oldest first">
            Export JSONL
          </button>
          <button className="btn btn-small" onClick={() => void actions.exportAudit('csv')} disabled={a.export.running} data-testid="export-csv" title="Export the filtered range as CSV">
            CSV
          </button>
        </div>
        <button className="btn btn-small" onClick={() => void actions.verifyAudit()} disabled={a.verify.running} data-testid="verify-chain" title="Re-hash the whole log from the genesis row">
          {a.verify.running ? 'Verifying…' : 'Verify chain'}
        </button>
      </div>

      {a.error ? <ErrorBanner error={a.error} what="Audit query failed" onRetry={() => void actions.reloadAudit()} /> : null}

      <div className={`audit-body${selected ? ' with-pane' : ''}`}>
        <div className="audit-list" onKeyDown={onListKey}>
          <div className="arow arow-head" aria-hidden>
            <span>id</span>
            <span>time</span>
            <span>type</span>
            <span>actor</span>
            <span>subject</span>
            <span>detail</span>
          </div>
          {a.items.length === 0 && !a.loading && !a.error ? (
            <EmptyState title={filtered ? 'No event matches these filters' : 'The audit log is empty'}>
              {filtered ? 'Widen the time range or clear a filter (Reset).' : 'Every claim, renew, release, expiry and operator action appears here.'}
            </EmptyState>
          ) : a.items.length === 0 && a.loading ? (
            <div className="pad">
              <Spinner label={a.partial ? 'Scanning for matches…' : 'Loading…'} />
            </div>
          ) : (
            <VirtualList
              items={a.items}
              rowHeight={ROW_H}
              getKey={(e) => e.id}
              onEndReached={canMore ? onEnd : undefined}
              endThreshold={60}
              onScrollTop={(top) => setAuditFollowing(top < 4)}
              activeIndex={selectedIndex >= 0 ? selectedIndex : null}
              scrollRef={listRef}
              testId="audit-list"
              ariaLabel="Audit events (arrow keys move through them)"
              focusable
              className="audit-vlist"
              render={(e) => <AuditRow e={e} selected={e.id === a.selectedId} onSelect={() => selectAudit(e.id)} />}
              footer={
                a.next === null && a.items.length > 0 ? (
                  <div className="list-end muted small">— end of the log{filtered ? ' for these filters' : ''} —</div>
                ) : a.loading ? (
                  <div className="list-end muted small">
                    <span className="spinner spinner-small" /> loading older events…
                  </div>
                ) : null
              }
            />
          )}
        </div>
        {selected ? <AuditDetail e={selected} onClose={() => selectAudit(null)} /> : null}
      </div>
    </div>
  );
}

function AuditRow({ e, selected, onSelect }: { e: AuditEvent; selected: boolean; onSelect: () => void }) {
  return (
    <div className={`arow${selected ? ' selected' : ''}`} onClick={onSelect} data-testid="audit-row" data-id={e.id} tabIndex={-1}>
      <span className="mono muted">{e.id}</span>
      <span className="mono" title={e.at}>
        {formatDateTime(e.at)}
      </span>
      <span>
        <Badge tone={auditTone(e.type)}>{e.type}</Badge>
      </span>
      <span className="ellipsis" title={e.actor}>
        {e.actor}
      </span>
      <span className="ellipsis mono" title={e.subject}>
        {e.subject}
      </span>
      <span className="ellipsis muted">{summariseDetail(e.detail)}</span>
    </div>
  );
}

function AuditDetail({ e, onClose }: { e: AuditEvent; onClose: () => void }) {
  const { setAuditForm } = useActions();
  const link = subjectLink(e.subject);
  const narrow = (patch: Partial<AuditFilterForm>) => setAuditForm(patch, { immediate: true });
  return (
    <aside className="pane" data-testid="audit-detail" aria-label={`Audit event ${e.id}`}>
      <div className="pane-head">
        <h2>Event {e.id}</h2>
        <button className="icon-btn" aria-label="Close (Esc)" title="Close (Esc)" onClick={onClose} data-pane-close>
          ×
        </button>
      </div>
      <div className="pane-body">
        <div className="chips">
          <Badge tone={auditTone(e.type)}>{e.type}</Badge>
          <span className="muted small">
            {formatDateTime(e.at)} · <RelativeTime at={e.at} />
          </span>
        </div>
        <dl className="kv">
          <dt>Actor</dt>
          <dd>
            <span className="mono">{e.actor}</span>{' '}
            <button className="link small" onClick={() => narrow({ actor: e.actor })}>
              only this actor
            </button>
          </dd>
          <dt>Subject</dt>
          <dd>
            <span className="mono">{e.subject}</span>{' '}
            <button className="link small" onClick={() => narrow({ subject: e.subject })}>
              only this subject
            </button>
            {link.kind === 'task' ? (
              <>
                {' · '}
                <button className="link small" onClick={() => navigate('queues', null, { task: link.id })}>
                  open task
                </button>
              </>
            ) : null}
          </dd>
          <dt>Trace id</dt>
          <dd className="mono">{e.traceId ?? <span className="muted">none</span>}</dd>
          <dt>At</dt>
          <dd className="mono">{e.at}</dd>
          <dt>Hash</dt>
          <dd className="mono hash" title={e.hash}>
            {e.hash}
          </dd>
          <dt>Prev hash</dt>
          <dd className="mono hash" title={e.prevHash}>
            {e.prevHash}
          </dd>
        </dl>
        <h3>Detail</h3>
        <pre className="json" data-testid="audit-detail-json">
          {prettyJson(e.detail)}
        </pre>
        <p className="small muted">Each row’s hash covers its fields and the previous row’s hash ({shortHash(e.prevHash)}), so an edited or removed row breaks the chain.</p>
      </div>
    </aside>
  );
}

function ExportStatus() {
  const ex = useConsole((s) => s.audit.export);
  const { clearExport } = useActions();
  if (!ex.running && !ex.result && !ex.error && !ex.cancelled) return null;
  const elapsedS = ex.startedAt ? ((ex.finishedAt ?? Date.now()) - ex.startedAt) / 1000 : 0;
  const frac = exportFraction(ex.rows, ex.total, !ex.running && !!ex.result);
  return (
    <div className={`export-status${ex.error ? ' export-failed' : ''}`} data-testid="export-status">
      <div className="export-line">
        <strong>{ex.running ? `Exporting ${ex.format?.toUpperCase()}…` : ex.error ? 'Export failed' : ex.cancelled ? 'Export cancelled' : 'Export finished'}</strong>
        <span className="muted small" data-testid="export-rows">
          {formatCount(ex.rows)} rows{ex.running && ex.total ? ` of ≈ ${formatCount(ex.total)}` : ''} · {formatBytes(ex.bytes)} · {formatDurationS(elapsedS)}
        </span>
        {ex.result ? (
          <span className="small">
            → <span className="mono" data-testid="export-file">{ex.result.file}</span>
          </span>
        ) : null}
        <span className="spacer" />
        {!ex.running ? (
          <button className="icon-btn" aria-label="Dismiss" onClick={clearExport}>
            ×
          </button>
        ) : null}
      </div>
      {ex.running || ex.result ? <ProgressBar fraction={frac} label="export progress" /> : null}
      {ex.error ? <ErrorBanner error={ex.error} /> : null}
    </div>
  );
}

function VerifyStatus() {
  const v = useConsole((s) => s.audit.verify);
  if (!v.result && !v.error) return null;
  if (v.error) return <ErrorBanner error={v.error} what="Could not verify the chain" />;
  const r = v.result!;
  const problems = r.problems ?? [];
  const total = r.problemCount ?? problems.length;
  const legacy = r.legacyText ?? [];
  return (
    <div className={`callout ${r.ok ? 'callout-ok' : 'callout-bad'}`} data-testid="verify-result" role="status">
      {r.ok ? (
        <>
          <strong>Chain verified.</strong> {formatCount(r.checked)} rows checked: every hash and every link matches, from the genesis row on.
        </>
      ) : (
        <>
          <strong>
            {total === 1 ? `Chain broken at row ${r.brokenAt}.` : `${formatCount(total)} bad rows, the first at row ${r.brokenAt}.`}
          </strong>{' '}
          {formatCount(r.checked)} rows checked; every other row and link matches. The log was altered outside Gaffer.
          {problems.length > 0 ? <RowList rows={problems.map((p) => ({ id: p.id, text: p.reason }))} total={total} /> : <span>{r.reason ?? 'hash mismatch'}</span>}
        </>
      )}
      {legacy.length > 0 ? (
        <span>
          {formatCount(r.legacyTextCount ?? legacy.length)} rows were written before text was checked and hold a character the database cannot store exactly (shown as �); their
          hashes prove they were not altered.
          <RowList rows={legacy.map((l) => ({ id: l.id, text: `${l.fields.join(', ')}` }))} total={r.legacyTextCount ?? legacy.length} />
        </span>
      ) : null}
    </div>
  );
}

/** The first rows of a verification finding, with how many more there are. */
function RowList({ rows, total }: { rows: Array<{ id: number; text: string }>; total: number }) {
  const shown = rows.slice(0, 8);
  return (
    <ul className="verify-rows">
      {shown.map((x, i) => (
        <li key={`${x.id}-${i}`}>
          row {x.id}: {x.text}
        </li>
      ))}
      {total > shown.length ? <li className="muted">… and {formatCount(total - shown.length)} more</li> : null}
    </ul>
  );
}
