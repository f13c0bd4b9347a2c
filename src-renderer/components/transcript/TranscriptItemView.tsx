/**
 * One item of a transcript: an assistant message (markdown, rendered safely: react-markdown
 * without raw HTML, so a `<script>` in a message is shown as text), a tool call that opens to its
 * input and output, a result, a system note, an error, or a block of plain output.
 */
import { memo } from 'react';
import { formatCost } from '../logs/usage-words';
import { markdown } from './markdown';
import { usageWords, type TranscriptItem } from './transcript';

const pretty = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v, null, 2) ?? ''));

/** The interesting part of a tool's input in one line (the command, the file), for the closed row. */
function inputBrief(input: unknown): string {
  if (typeof input === 'string') return input;
  if (typeof input === 'object' && input !== null) {
    const i = input as Record<string, unknown>;
    for (const k of ['command', 'file_path', 'path', 'pattern', 'url', 'query', 'description']) if (typeof i[k] === 'string') return i[k] as string;
  }
  return JSON.stringify(input) ?? '';
}

/** Rows that stay on screen while the list scrolls are not rendered again (items are rebuilt only when lines arrive). */
export const TranscriptItemView = memo(function TranscriptItemView({ item }: { item: TranscriptItem }) {
  switch (item.type) {
    case 'message': {
      const usage = usageWords(item.usage);
      return (
        <div className={`tx-item tx-message${item.thinking ? ' tx-thinking' : ''}`} data-seq={item.seq}>
          <div className="tx-meta small muted">
            {item.thinking ? 'Thinking' : 'Assistant'}
            {item.model ? ` · ${item.model}` : ''}
            {usage ? ` · ${usage}` : ''}
          </div>
          <div className="tx-markdown">
            {markdown(item.text)}
          </div>
        </div>
      );
    }
    case 'tool': {
      const usage = usageWords(item.usage);
      const state = !item.done ? 'no result yet' : item.isError ? `failed${item.exitCode !== undefined ? ` (exit ${item.exitCode})` : ''}` : item.exitCode !== undefined ? `exit ${item.exitCode}` : 'done';
      return (
        <details className={`tx-item tx-tool${item.isError ? ' tx-failed' : ''}`} data-seq={item.seq}>
          <summary>
            <span className="tx-tool-name">{item.name}</span> <span className="tx-tool-brief">{inputBrief(item.input)}</span>{' '}
            <span className={`tx-tool-state small${item.isError ? ' tx-error-word' : ' muted'}`}>{item.isError ? `✗ ${state}` : state}</span>
            {usage ? <span className="small muted"> · {usage}</span> : null}
          </summary>
          {item.input !== undefined ? (
            <>
              <div className="small muted">Input</div>
              <pre className="tx-pre">{pretty(item.input)}</pre>
            </>
          ) : null}
          {item.done ? (
            <>
              <div className="small muted">{item.isError ? 'Error' : 'Output'}</div>
              <pre className="tx-pre">{pretty(item.output ?? '')}</pre>
            </>
          ) : null}
        </details>
      );
    }
    case 'result': {
      const usage = usageWords(item.usage);
      const facts = [
        item.numTurns !== undefined ? `${item.numTurns} turn${item.numTurns === 1 ? '' : 's'}` : null,
        item.durationMs !== undefined ? `${(item.durationMs / 1000).toFixed(1)} s` : null,
        usage,
        item.costUsd !== undefined ? formatCost(item.costUsd) : null,
      ].filter(Boolean);
      return (
        <div className={`tx-item tx-result${item.isError ? ' tx-failed' : ''}`} data-seq={item.seq} role={item.isError ? 'alert' : undefined}>
          <div className="tx-meta small">
            <strong>{item.isError ? '✗ Ended with an error' : 'Finished'}</strong>
            {facts.length ? <span className="muted"> · {facts.join(' · ')}</span> : null}
          </div>
          <div className="tx-markdown">
            {markdown(item.text)}
          </div>
        </div>
      );
    }
    case 'system':
      return (
        <div className="tx-item tx-system small muted" data-seq={item.seq}>
          {item.text}
        </div>
      );
    case 'error':
      return (
        <div className="tx-item tx-error tx-failed small" data-seq={item.seq}>
          ✗ {item.text}
        </div>
      );
    case 'output':
      return (
        <pre className={`tx-item tx-output tx-pre${item.stream === 'stderr' || item.warn ? ' tx-stderr' : ''}`} data-seq={item.seq} aria-label={item.stream === 'stderr' ? 'standard error' : item.stream === 'agent' ? 'agent' : 'output'}>
          {item.lines.join('\n')}
        </pre>
      );
  }
});

/** What an item is, in a word or two: an outline row's only text (scroll-pace.ts). */
function outlineLabel(item: TranscriptItem): string {
  switch (item.type) {
    case 'message':
      return item.thinking ? 'Thinking' : 'Assistant';
    case 'tool':
      return item.name;
    case 'result':
      return item.isError ? 'Ended with an error' : 'Finished';
    case 'system':
      return 'Note';
    case 'error':
      return 'Error';
    case 'output':
      return item.stream === 'stderr' ? 'Standard error' : 'Output';
  }
}

/** A row drawn while the list moves too fast to read: its label and one faint block, at the row's known height. */
export const TranscriptRowOutline = memo(function TranscriptRowOutline({ item }: { item: TranscriptItem }) {
  return (
    <div className={`tx-item tx-outline${item.type === 'tool' || item.type === 'error' ? ' tx-outline-boxed' : ''}`} data-seq={item.seq}>
      <span className="small muted">{outlineLabel(item)}</span>
    </div>
  );
});

/**
 * One row of the virtual list, placed at `start` px. Memoised on its props, which are all stable
 * while the list scrolls (the row's item, its offset, the pace): a scrolled frame renders only the
 * rows that came into view, not a new wrapper, style object and child element for every row on
 * screen. The same row (same key) switches between outline and full, so a fling that slows keeps
 * its DOM nodes and only swaps their content. Full rows are measured (`measure`, the virtual list's
 * stable ref); outlines keep `size`, the height the row is known or estimated to have.
 */
export const TranscriptRow = memo(function TranscriptRow({ item, index, start, outline, size, measure }: { item: TranscriptItem; index: number; start: number; outline: boolean; size: number | undefined; measure: (el: HTMLDivElement | null) => void }) {
  return outline ? (
    <div data-index={index} className="transcript-row" aria-hidden style={{ position: 'absolute', top: 0, left: 0, right: 0, height: size, transform: `translateY(${start}px)` }}>
      <TranscriptRowOutline item={item} />
    </div>
  ) : (
    <div data-index={index} ref={measure} className="transcript-row" style={{ position: 'absolute', top: 0, left: 0, right: 0, transform: `translateY(${start}px)` }}>
      <TranscriptItemView item={item} />
    </div>
  );
});
