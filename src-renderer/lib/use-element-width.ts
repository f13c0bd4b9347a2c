/** The rendered width of an element, kept current with a ResizeObserver (null until measured). */
import { useCallback, useEffect, useRef, useState } from 'react';

export function useElementWidth<E extends HTMLElement>(): [(el: E | null) => void, number | null] {
  const [width, setWidth] = useState<number | null>(null);
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback((el: E | null) => {
    observer.current?.disconnect();
    observer.current = null;
    if (!el || typeof ResizeObserver === 'undefined') return;
    setWidth(el.getBoundingClientRect().width);
    observer.current = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      if (w !== undefined) setWidth((old) => (old !== null && Math.abs(old - w) < 1 ? old : w));
    });
    observer.current.observe(el);
  }, []);
  useEffect(() => () => observer.current?.disconnect(), []);
  return [ref, width];
}
