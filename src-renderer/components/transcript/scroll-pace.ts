/**
 * Whether the transcript moves too fast to read. Faster than a screen per frame (a fling, a drag of
 * the scroll bar across thousands of rows), every frame brings a screen of rows nobody can read,
 * and mounting them in full (markdown, tool calls, their layout and paint) cost 8–19 ms of the
 * renderer's CPU per frame in the bench's fling: frames dropped exactly when nothing could be read.
 * While it moves that fast, rows are drawn as outlines at their known height; they fill in once the
 * list slows below the pace or stops for SETTLE_MS. A jump (End, a click on the track) is one move
 * after a pause: slow by this measure, rendered in full at once.
 */
import { useCallback, useEffect, useRef, useState } from 'react';

/** One display frame at 60 Hz, ms. */
const FRAME_MS = 1000 / 60;
/** Screens per frame from which nothing on screen can be read. */
export const FAST_SCREENS_PER_FRAME = 1;
/** A move this long after the one before (ms) is a jump from rest, not part of a fling. */
const REST_MS = 100;
/** How long after the last fast move rows fill in, ms. */
export const SETTLE_MS = 150;

/** The pace of a scrolled element, from one scroll position to the next. */
export class ScrollPace {
  private top = 0;
  private at = Number.NEGATIVE_INFINITY;

  /** Whether the move to `top` at `now` (ms) went at a screen (`viewport` px) per frame or faster. */
  observe(top: number, now: number, viewport: number): boolean {
    const dy = Math.abs(top - this.top);
    const dt = now - this.at;
    this.top = top;
    this.at = now;
    if (!(dt > 0) || dt > REST_MS || viewport <= 0) return false;
    // Events come at most once a frame; a longer gap spreads the move over it.
    return dy / Math.max(dt, FRAME_MS) >= (FAST_SCREENS_PER_FRAME * viewport) / FRAME_MS;
  }
}

const performanceNow = (): number => performance.now();

/** [fast, observe]: call `observe` from the element's scroll handler; `fast` holds until SETTLE_MS after the last fast move. */
export function useFastScroll(now: () => number = performanceNow): [boolean, (el: HTMLElement) => void] {
  const [fast, setFast] = useState(false);
  const pace = useRef(new ScrollPace());
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const observe = useCallback(
    (el: HTMLElement) => {
      if (!pace.current.observe(el.scrollTop, now(), el.clientHeight)) return;
      setFast(true); // the same value again renders nothing
      clearTimeout(timer.current);
      timer.current = setTimeout(() => setFast(false), SETTLE_MS);
    },
    [now],
  );
  return [fast, observe];
}
