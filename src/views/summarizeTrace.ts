import { applyEvent, createMetrics } from '../events/metrics.js';
import { formatMetrics } from './formatMetrics.js';
import { formatTimeline, type TimelineOptions } from './formatTimeline.js';
import { readRecording } from './readRecording.js';

/**
 * The summary of a saved trace (or `record` file), as `troupe trace summary` prints it: a line naming the run, its
 * timeline ({@link formatTimeline}) and its metrics table ({@link formatMetrics}, folded from every event). A last line
 * a crash cut short is left out, and the first line says so; anything `readRecording` refuses (a missing file, a corrupt trace, a newer
 * `schemaVersion`) rejects with its error.
 *
 * @example
 * console.log(await summarizeTrace('run.trace.jsonl'));
 */
export async function summarizeTrace(path: string, options: TimelineOptions = {}): Promise<string> {
  const { runId, events, tornLine } = await readRecording(path, { dropTornLine: true });
  const metrics = events.reduce(applyEvent, createMetrics());
  const span = events.length === 0 ? 0 : Math.round(events.at(-1)!.at - events[0]!.at);
  const torn = tornLine === undefined ? '' : ` (line ${tornLine}, its last, was cut short, as by a crash, and is left out)`;
  const title = `Run ${runId ?? '(unknown)'}: ${events.length} event${events.length === 1 ? '' : 's'} over ${span} ms${torn}`;
  return [title, '', 'Timeline', formatTimeline(events, options), '', 'Metrics', formatMetrics(metrics)].join('\n');
}
