/** One line of the reliability table: what was tried, how many times troupe did not hold, and what was lost. */
export interface Row {
  case: string;
  tried: number;
  /** Times the promise did not hold (a crash, an escape, a leak, a wrong state). */
  failed: number;
  /** Acknowledged data that was gone afterwards (writes, results, sessions). */
  lost: number;
  /** Anything else worth printing (counts, figures). */
  detail?: string;
}
