/**
 * The log pane and the timeline of one task or run, as a section of a detail pane. The log can
 * be widened to most of the window (Esc or the button brings it back).
 */
import { useEffect, useState } from 'react';
import type { TimelineEntry } from '../../../src-main/common/console-api';
import { LogPane, type LogPaneProps } from './LogPane';
import { Timeline } from './Timeline';

export function ActivitySection({ log, timeline, now }: { log: LogPaneProps; timeline: { entries: TimelineEntry[] | null; error: string | null }; now: number }) {
  const [wide, setWide] = useState(false);
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
          <button type="button" className="btn small" onClick={() => setWide(!wide)} aria-expanded={wide}>
            {wide ? 'Back to the details' : 'Widen'}
          </button>
        </div>
        <LogPane {...log} height={wide ? Math.max(200, viewH - 190) : 300} />
      </div>
      <h3>Timeline</h3>
      <Timeline entries={timeline.entries} error={timeline.error} now={now} />
    </>
  );
}
