import { elementScroll, observeElementOffset, observeElementRect, Virtualizer, type VirtualItem } from '@tanstack/virtual-core';
import { useLayoutEffect, useReducer, useRef, useState } from 'preact/hooks';

/** The rows a virtual list draws: only those in view (and a few around), each with its offset. */
export interface VirtualRows {
  /** The scrolling element: give it to the list's outer `div` as `ref`. */
  readonly scrollRef: { current: HTMLDivElement | null };
  readonly items: VirtualItem[];
  /** The height of every row together. */
  readonly total: number;
  readonly virtualizer: Virtualizer<HTMLDivElement, Element>;
}

/**
 * A virtual list of `count` rows of one height (TanStack Virtual): a list of 100,000 rows draws the 40 in view.
 * `follow` keeps it at the end as rows are added, while it is scrolled to the end.
 */
export function useVirtualRows(count: number, rowHeight: number, follow = false): VirtualRows {
  const scrollRef = useRef<HTMLDivElement | null>(null);
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  const options = {
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => rowHeight,
    scrollToFn: elementScroll,
    observeElementRect,
    observeElementOffset,
    overscan: 12,
    followOnAppend: follow,
    onChange: () => redraw(undefined as never),
  };
  const [virtualizer] = useState(() => new Virtualizer<HTMLDivElement, Element>(options));
  virtualizer.setOptions(options);
  useLayoutEffect(() => virtualizer._didMount(), []);
  useLayoutEffect(() => virtualizer._willUpdate());
  return { scrollRef, items: virtualizer.getVirtualItems(), total: virtualizer.getTotalSize(), virtualizer };
}
