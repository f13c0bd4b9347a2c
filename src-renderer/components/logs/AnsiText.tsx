import { memo } from 'react';
import { ansiSegments } from '../../lib/ansi';

/** One log line's text with its terminal colours (spans, never HTML). */
export const AnsiText = memo(function AnsiText({ text }: { text: string }) {
  const segs = ansiSegments(text);
  if (segs.length === 1 && segs[0]!.classes.length === 0 && !segs[0]!.color && !segs[0]!.background) return <>{segs[0]!.text}</>;
  return (
    <>
      {segs.map((s, i) => (
        <span key={i} className={s.classes.join(' ') || undefined} style={s.color || s.background ? { color: s.color, background: s.background } : undefined}>
          {s.text}
        </span>
      ))}
    </>
  );
});
