/**
 * The log pane and the timeline of one task or run, as a section of a detail pane. The log can
 * be widened to most of the window (Esc or the button brings it back).
 */
import { useEffect, useState } from 'react';
import type { TimelineEntry } from '../../../src-main/common/console-api';
import { TranscriptPane } from '../transcript/TranscriptPane';
import { LogPane, type LogPaneProps } from './LogPane';
import { Timeline } from './Timeline';

export function ActivitySection({ log, timeline, now }: { log: LogPaneProps; timeline: { entries: TimelineEntry[] | null; error: string | null }; now: number }) {
  const [wide, setWide] = useState(false);
  const [view, setView] = useState<'raw' | 'transcript'>('raw');
  const [viewH, setViewH] = useState(() => window.innerHeight);
  useEffect(() => {
    if (!wide) return;
    const onKey = (e: globalThis.KeyboardEvent) => e.key === 'Escape' && setWide(false);
    const onResize = () => setViewH(window.innerHeight);
    window.addEventListener('keydown', onKey);
    window.addEventListener('resize', onResize);
    onResize();
    return () => {
      window.removeEventListener('keydown', onKey);
      window.removeEventListener('resize', onResize);
    };
  }, [wide]);
  return (
    <>
      <div className={wide ? 'log-wide' : 'log-inline'} role={wide ? 'dialog' : undefined} aria-label={wide ? 'Log' : undefined} aria-modal={wide ? true : undefined}>
        <div className="section-head">
          <h3>Log</h3>
          <div role="tablist" aria-label="How to read the log" className="log-tabs">
            <button type="button" role="tab" className={`log-tab${view === 'transcript' ? ' on' : ''}`} aria-selected={view === 'transcript'} onClick={() => setView('transcript')} data-testid="view-transcript">
              Transcript
            </button>
            <button type="button" role="tab" className={`log-tab${view === 'raw' ? ' on' : ''}`} aria-selected={view === 'raw'} onClick={() => setView('raw')} data-testid="view-raw-log">
              Raw log
            </button>
          </div>
          <button type="button" className="btn small" onClick={() => setWide(!wide)} aria-expanded={wide}>
            {wide ? 'Back to the details' : 'Widen'}
          </button>
        </div>
        {view === 'raw' ? <LogPane {...log} height={wide ? Math.max(200, viewH - 190) : 300} /> : <TranscriptPane {...log} height={wide ? Math.max(200, viewH - 150) : 340} />}
      </div>
      <h3>Timeline</h3>
      <Timeline entries={timeline.entries} error={timeline.error} now={now} />
    </>
  );
}
