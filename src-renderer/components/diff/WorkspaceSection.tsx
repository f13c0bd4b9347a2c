/**
 * What a task's or run's attempts changed (PROTOCOL §15), as a section of its detail pane: the
 * branch and its figures, the links and files the command announced, and the diff viewer — the
 * files list (a click jumps to the file) beside the unified diff, coloured by highlight.js
 * (which escapes the text it is given: no HTML of the diff is ever rendered as HTML) and
 * virtualised, so a diff of 1 MiB draws only the rows on screen.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import hljs from 'highlight.js/lib/common';
import { useMemo, useRef } from 'react';
import type { WorkspaceData } from '../../lib/workspace-data';
import { ErrorBanner } from '../States';
import { changeWords, diffRows, type DiffRow } from './diff-model';
import './diff.css';

const ROW_PX = 18;

function highlighted(text: string, language: string | undefined): string | null {
  if (!language || !hljs.getLanguage(language) || text.length > 2000) return null;
  try {
    return hljs.highlight(text, { language, ignoreIllegals: true }).value;
  } catch {
    return null;
  }
}

function Line({ row, language }: { row: DiffRow; language: string | undefined }) {
  const html = row.kind === 'add' || row.kind === 'del' || row.kind === 'ctx' ? highlighted(row.text, language) : null;
  const mark = row.kind === 'add' ? '+' : row.kind === 'del' ? '−' : ' ';
  return (
    <div className={`diff-row diff-${row.kind}`}>
      <span className="diff-no">{row.oldNo ?? ''}</span>
      <span className="diff-no">{row.newNo ?? ''}</span>
      <span className="diff-mark" aria-hidden="true">
        {row.kind === 'file' || row.kind === 'hunk' || row.kind === 'note' ? '' : mark}
      </span>
      {/* highlight.js output is escaped text in <span class="hljs-…"> elements. */}
      {html !== null ? <code className="diff-text hljs" dangerouslySetInnerHTML={{ __html: html }} /> : <code className="diff-text">{row.text}</code>}
    </div>
  );
}

export function DiffViewer({ text, height = 360 }: { text: string; height?: number }) {
  const { files, rows } = useMemo(() => diffRows(text), [text]);
  const scrollRef = useRef<HTMLDivElement | null>(null);
  // initialRect: the first render draws a screenful before the element is measured.
  const v = useVirtualizer({ count: rows.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_PX, overscan: 20, initialRect: { width: 800, height } });
  if (rows.length === 0) return <p className="muted small">No changes.</p>;
  return (
    <div className="diff-viewer" data-testid="diff-viewer">
      <ul className="diff-files" aria-label="Changed files">
        {files.map((f, i) => (
          <li key={`${f.path}-${i}`}>
            <button type="button" className="link diff-file mono small" onClick={() => v.scrollToIndex(f.row, { align: 'start' })} title={f.path}>
              <span className="ellipsis">{f.path}</span>
              <span className="diff-count">
                {f.binary ? 'binary' : (
                  <>
                    <span className="diff-ins">+{f.insertions}</span> <span className="diff-dels">−{f.deletions}</span>
                  </>
                )}
              </span>
            </button>
          </li>
        ))}
      </ul>
      <div className="diff-scroll mono" ref={scrollRef} style={{ height }} tabIndex={0} role="region" aria-label="Unified diff">
        <div style={{ height: v.getTotalSize(), position: 'relative' }}>
          {v.getVirtualItems().map((item) => {
            const row = rows[item.index]!;
            return (
              <div key={item.key} style={{ position: 'absolute', top: 0, left: 0, right: 0, height: ROW_PX, transform: `translateY(${item.start}px)` }}>
                <Line row={row} language={files[row.file]?.language} />
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

const num = (v: unknown) => (typeof v === 'number' ? v : 0);

/** The section (data from store/use-workspace.ts); renders nothing for work without artifacts. */
export function WorkspaceSection({ items, shown, diff, error, showAttempt }: WorkspaceData) {
  const workspaces = (items ?? []).filter((a) => a.kind === 'workspace');
  if (error) return <ErrorBanner error={error} what="Could not load what the work changed" />;
  if (!items || items.length === 0) return null;
  const ws = workspaces.find((w) => w.attempt === shown);
  const others = items.filter((a) => a.kind === 'link' || a.kind === 'file');
  return (
    <section className="workspace-section" aria-label="Changes">
      <h3>Changes</h3>
      {others.length ? (
        <ul className="artifact-links">
          {others.map((a, i) => (
            <li key={`${a.kind}-${a.name}-${i}`}>
              {a.kind === 'link' && typeof a.data.url === 'string' && /^https?:\/\//i.test(a.data.url) ? (
                <a href={a.data.url} target="_blank" rel="noreferrer noopener">
                  {a.name}
                </a>
              ) : (
                <span>
                  {a.name}: <span className="mono small">{String(a.data.path ?? a.data.url ?? '')}</span>
                </span>
              )}{' '}
              <span className="muted small">attempt {a.attempt}</span>
            </li>
          ))}
        </ul>
      ) : null}
      {ws ? (
        <>
          <div className="workspace-head">
            <span className="mono small" title="branch">
              {String(ws.data.branch ?? '')}
            </span>
            <span className="small">
              {num(ws.data.commits)} {num(ws.data.commits) === 1 ? 'commit' : 'commits'},{' '}
              {changeWords({ insertions: num(ws.data.insertions), deletions: num(ws.data.deletions), filesChanged: num(ws.data.filesChanged) })}
              {ws.data.uncommitted ? ' (some not committed)' : ''}
            </span>
            {workspaces.length > 1 ? (
              <label className="inline-field small">
                <span className="muted">attempt</span>
                <select value={shown ?? ''} onChange={(e) => showAttempt(Number(e.target.value))} aria-label="Show the changes of attempt">
                  {workspaces.map((w) => (
                    <option key={w.attempt} value={w.attempt}>
                      {w.attempt}
                    </option>
                  ))}
                </select>
              </label>
            ) : null}
          </div>
          {ws.data.diffTruncated ? <p className="muted small">The diff was longer than 1 MiB: only its start is kept.</p> : null}
          {diff && diff.attempt === shown ? <DiffViewer text={diff.diff} /> : null}
        </>
      ) : null}
    </section>
  );
}
