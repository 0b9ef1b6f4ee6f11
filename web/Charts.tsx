import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatDuration } from '../src/views/liveFormat.js';
import type { RunSeries } from '../src/views/RunModel.js';

/** One chart: its title, and its values from the run's series. */
interface ChartSpec {
  readonly title: string;
  readonly values: (series: RunSeries) => number[];
  readonly format: (value: number) => string;
}

const CHARTS: readonly ChartSpec[] = [
  { title: 'running agents', values: (series) => series.running, format: (value) => value.toFixed(0) },
  { title: 'tokens', values: (series) => series.tokens, format: (value) => value.toLocaleString('en-US') },
  { title: 'cost (USD)', values: (series) => series.costUsd, format: (value) => `$${value.toFixed(4)}` },
  { title: 'messages / s', values: perSecond, format: (value) => value.toFixed(1) },
];

/**
 * Messages a second at each point: those sent in the window before it (a second, or a fiftieth of the run when that is
 * longer), so close points do not make spikes.
 */
function perSecond(series: RunSeries): number[] {
  const { t, messages } = series;
  const windowMs = Math.max(1_000, ((t[t.length - 1] ?? 0) - (t[0] ?? 0)) / 50);
  let from = 0;
  return messages.map((sent, index) => {
    while (t[from]! < t[index]! - windowMs) from += 1;
    const before = from === 0 ? 0 : messages[from - 1]!;
    return ((sent - before) * 1_000) / windowMs;
  });
}

/** The run's figures over time (uPlot: fast canvas charts), redrawn with each batch of events. */
export function Charts({ series, version }: { series: RunSeries; version: number }) {
  return (
    <section class="panel charts" aria-label="Charts">
      {CHARTS.map((spec) => (
        <Chart key={spec.title} spec={spec} series={series} version={version} />
      ))}
    </section>
  );
}

function Chart({ spec, series, version }: { spec: ChartSpec; series: RunSeries; version: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  useEffect(() => {
    const element = box.current!;
    const made = new uPlot(
      {
        width: Math.max(160, element.clientWidth),
        height: 100,
        legend: { show: false },
        cursor: { show: false },
        // A series of zeros (no cost on scripted models) keeps a small axis instead of uPlot's 0–100.
        scales: { x: { time: false }, y: { range: (_, _min, max) => [0, max > 0 ? max * 1.05 : 1] } },
        axes: [
          { show: true, size: 24, font: '10px sans-serif', values: (_, ticks) => ticks.map(formatDuration) },
          { show: true, size: 60, font: '10px sans-serif', values: (_, ticks) => ticks.map(spec.format) },
        ],
        series: [{}, { stroke: '#4f6bed', fill: 'rgba(79,107,237,0.12)', width: 1.5, points: { show: false } }],
      },
      [[], []],
      element,
    );
    plot.current = made;
    const resize = new ResizeObserver(() => made.setSize({ width: Math.max(160, element.clientWidth), height: 100 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
    };
  }, []);
  useEffect(() => {
    plot.current?.setData([series.t.slice(), spec.values(series).slice()]);
  }, [version]);
  const values = spec.values(series);
  const last = values[values.length - 1] ?? 0;
  return (
    <div class="chart" data-testid={`chart-${spec.title}`}>
      <div class="chart-title">
        {spec.title} <strong>{spec.format(last)}</strong>
      </div>
      <div ref={box} />
    </div>
  );
}
