/**
 * A virtualised list (only visible rows are in the DOM), with an "end reached" callback for
 * infinite paging. Every list that can grow past a screenful uses it.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, type ReactNode, type Ref } from 'react';

export interface VirtualListProps<T> {
  items: T[];
  rowHeight: number;
  render: (item: T, index: number) => ReactNode;
  getKey: (item: T, index: number) => string | number;
  /** Called when the last rows come into view (load the next page). */
  onEndReached?: () => void;
  endThreshold?: number;
  overscan?: number;
  className?: string;
  /** Scroll position callback (top = 0). */
  onScrollTop?: (top: number) => void;
  footer?: ReactNode;
  /** Index to keep in view (keyboard selection). */
  activeIndex?: number | null;
  scrollRef?: Ref<HTMLDivElement>;
  testId?: string;
  ariaLabel?: string;
  /** The list takes the keyboard focus itself (its owner handles the arrow keys). */
  focusable?: boolean;
}

export function VirtualList<T>(p: VirtualListProps<T>) {
  const parentRef = useRef<HTMLDivElement | null>(null);
  const v = useVirtualizer({
    count: p.items.length,
    getScrollElement: () => parentRef.current,
    estimateSize: () => p.rowHeight,
    overscan: p.overscan ?? 12,
    getItemKey: (i) => p.getKey(p.items[i]!, i),
  });
  const vItems = v.getVirtualItems();
  const last = vItems[vItems.length - 1];
  const { onEndReached, endThreshold = 30 } = p;
  const count = p.items.length;
  const lastIndex = last?.index ?? -1;
  useEffect(() => {
    if (onEndReached && (count === 0 || lastIndex >= count - endThreshold)) onEndReached();
  }, [lastIndex, count, onEndReached, endThreshold]);
  useEffect(() => {
    if (p.activeIndex !== null && p.activeIndex !== undefined && p.activeIndex >= 0) v.scrollToIndex(p.activeIndex, { align: 'auto' });
  }, [p.activeIndex, v]);

  return (
    <div
      ref={(el) => {
        parentRef.current = el;
        if (typeof p.scrollRef === 'function') p.scrollRef(el);
        else if (p.scrollRef) (p.scrollRef as { current: HTMLDivElement | null }).current = el;
      }}
      className={`vlist ${p.className ?? ''}`}
      onScroll={p.onScrollTop ? (e) => p.onScrollTop!(e.currentTarget.scrollTop) : undefined}
      data-testid={p.testId}
      role="list"
      aria-label={p.ariaLabel}
      tabIndex={p.focusable ? 0 : undefined}
    >
      <div style={{ height: v.getTotalSize(), position: 'relative', width: '100%' }}>
        {vItems.map((vi) => (
          <div
            key={vi.key}
            role="listitem"
            style={{ position: 'absolute', top: 0, left: 0, width: '100%', height: vi.size, transform: `translateY(${vi.start}px)` }}
          >
            {p.render(p.items[vi.index]!, vi.index)}
          </div>
        ))}
      </div>
      {p.footer}
    </div>
  );
}
