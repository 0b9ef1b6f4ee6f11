// Measuring helpers for the benchmarks: wall time, heap after a full GC, bytes allocated, figures as JSON lines.
import { GCProfiler, getHeapStatistics } from 'node:v8';

/** One figure of the benchmark, printed as one JSON line. */
export interface Figure {
  bench: string;
  name: string;
  /** The measured value, in `unit`. */
  value: number;
  unit: string;
  /** What it is compared with, measured in the same run (omitted for absolute figures). */
  baseline?: string;
  baselineValue?: number;
  /** value / baselineValue. */
  ratio?: number;
  /** The target, as a sentence, and whether this run met it. */
  target?: string;
  pass?: boolean;
  /** Anything else worth keeping with the figure (sizes, counts). */
  detail?: Record<string, number | string>;
}

const figures: Figure[] = [];

/** Records a figure and prints it as one JSON line. */
export function report(figure: Figure): Figure {
  const rounded: Figure = {
    ...figure,
    value: round(figure.value),
    ...(figure.baselineValue === undefined ? {} : { baselineValue: round(figure.baselineValue) }),
    ...(figure.ratio === undefined ? {} : { ratio: round(figure.ratio) }),
  };
  figures.push(rounded);
  console.log(JSON.stringify(rounded));
  return rounded;
}

/** Every figure reported so far. */
export function reported(): readonly Figure[] {
  return figures;
}

/** Three significant-ish digits: enough for a ratio, short in a table. */
export function round(value: number): number {
  if (!Number.isFinite(value)) return value;
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return Number(value.toFixed(digits));
}

/** Runs a full garbage collection (the bench runs with --expose-gc; without it this does nothing). */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) {
    gc();
    gc();
  }
}

/**
 * The heap in use after full GCs, in bytes. It lets the event loop turn between collections, so objects that only
 * pending callbacks still held (a finished run's last promise jobs) are gone too.
 */
export async function heapAfterGc(): Promise<number> {
  for (let round = 0; round < 3; round++) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

/** Milliseconds `work` takes, on the wall clock. */
export async function timed(work: () => Promise<unknown> | unknown): Promise<number> {
  const start = performance.now();
  await work();
  return performance.now() - start;
}

/**
 * The median of a few runs of `work` (in ms), to damp a noisy machine. No GC is forced between runs: a forced full
 * GC also throws away compiled code, so the run after it would measure the JIT as much as the work.
 */
export async function medianOf(runs: number, work: () => Promise<unknown> | unknown): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    times.push(await timed(work));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

/** One run of each work, in turn: wall ms and bytes allocated, by the work's name. */
export type Round<K extends string> = Record<K, { ms: number; bytes: number }>;

/**
 * `runs` rounds, each running every work once, one after another (`allocatedDuring`). On a machine whose speed drifts
 * over seconds, measuring all runs of one work and then all of the next compares them at different speeds; in rounds,
 * each comparison is made within a few seconds, and `medianRound` picks the round of the median ratio.
 */
export async function inRounds<K extends string>(runs: number, works: Record<K, () => Promise<unknown>>): Promise<Round<K>[]> {
  const rounds: Round<K>[] = [];
  const names = Object.keys(works) as K[];
  for (let r = 0; r < runs; r++) {
    const round = {} as Round<K>;
    // Each round in another order (the works rotated): a work run right after another that shares its code finds it
    // in the processor's caches, so a fixed order favoured the work that always came second.
    for (let at = 0; at < names.length; at++) {
      const name = names[(at + r) % names.length]!;
      round[name] = await allocatedDuring(works[name]);
    }
    rounds.push(round);
  }
  return rounds;
}

/** The median of `pick` over the rounds. */
export function medianIn<K extends string>(rounds: readonly Round<K>[], pick: (round: Round<K>) => number): number {
  const values = rounds.map(pick).sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)]!;
}

/**
 * The round whose ratio of `a`'s wall time to `b`'s is the median of the rounds' (the ratio and both times as they were
 * measured together, so the ratio a figure shows is its value over its baseline).
 */
export function medianRound<K extends string>(rounds: readonly Round<K>[], a: K, b: K): { a: number; b: number; ratio: number } {
  const sorted = rounds.map((round) => ({ a: round[a].ms, b: round[b].ms, ratio: round[a].ms / round[b].ms })).sort((x, y) => x.ratio - y.ratio);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** A seeded pseudo-random generator (mulberry32), so planner batches are the same in every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A meter started by {@link startMeter}: `stop` gives the wall ms and bytes allocated since it started. */
export interface Meter {
  stop(): { ms: number; bytes: number };
}

/**
 * Starts measuring wall time and the bytes allocated on the JS heap: the heap's growth between collections, summed over
 * every collection V8 runs meanwhile (read from `v8.GCProfiler`), plus what is left at the end. For a window inside a
 * run (the run's setup not counted); {@link allocatedDuring} measures a whole run.
 */
export function startMeter(): Meter {
  const profiler = new GCProfiler();
  const before = getHeapStatistics().used_heap_size;
  profiler.start();
  const start = performance.now();
  return {
    stop() {
      const ms = performance.now() - start;
      const after = getHeapStatistics().used_heap_size;
      const { statistics } = profiler.stop();
      let bytes = 0;
      let last = before;
      for (const gc of statistics) {
        bytes += Math.max(0, gc.beforeGC.heapStatistics.usedHeapSize - last);
        last = gc.afterGC.heapStatistics.usedHeapSize;
      }
      bytes += Math.max(0, after - last);
      return { ms, bytes };
    },
  };
}

/** Wall ms of `work` and the bytes it allocated on the JS heap (see {@link startMeter}). */
export async function allocatedDuring(work: () => Promise<unknown>): Promise<{ ms: number; bytes: number }> {
  const meter = startMeter();
  await work();
  return meter.stop();
}
