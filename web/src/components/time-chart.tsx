import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export type Series = { label: string; values: number[]; color: string };

/** Marks the chart timing reads: the API's answer arrived → the chart is drawn. */
export const CHART_MARKS = { response: 'timeseries-response', drawn: 'timeseries-drawn', measure: 'timeseries-draw' } as const;

/**
 * A time series chart (uPlot: canvas, made for many points). `times` are bucket starts in
 * seconds. The figure carries a text summary for screen readers; the numbers are in the tables.
 */
export function TimeChart({
  times,
  series,
  interval,
  summary,
}: {
  times: number[];
  series: Series[];
  interval: 'day' | 'hour';
  summary: string;
}) {
  const box = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(element.clientWidth, 280);
    const options: uPlot.Options = {
      width,
      height: 280,
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        { stroke: '#3d4451', grid: { stroke: '#e6e8ee' } },
        { stroke: '#3d4451', grid: { stroke: '#e6e8ee' }, size: 56 },
      ],
      series: [
        { label: interval === 'hour' ? 'Hour' : 'Day', value: (_u, v) => (v === null ? '—' : formatBucket(v, interval)) },
        ...series.map((s) => ({ label: s.label, stroke: s.color, width: 2, fill: `${s.color}1f`, points: { show: false } })),
      ],
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      hooks: {
        draw: [
          () => {
            // Only the first draw after new data counts: resizing redraws too.
            if (
              performance.getEntriesByName(CHART_MARKS.response, 'mark').length > 0 &&
              performance.getEntriesByName(CHART_MARKS.drawn, 'mark').length === 0
            ) {
              performance.mark(CHART_MARKS.drawn);
              performance.measure(CHART_MARKS.measure, CHART_MARKS.response, CHART_MARKS.drawn);
            }
          },
        ],
      },
    };
    const chart = new uPlot(options, [times, ...series.map((s) => s.values)], element);
    const canvas = chart.root.querySelector('canvas');
    canvas?.setAttribute('role', 'img');
    canvas?.setAttribute('aria-label', summary);
    const resize = new ResizeObserver(() => {
      const next = Math.max(element.clientWidth, 280);
      if (next !== chart.width) chart.setSize({ width: next, height: 280 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, interval, summary]);

  return (
    <figure class="chart" aria-label="Time series chart">
      <div ref={box} class="chart-canvas" />
      <figcaption class="visually-hidden">{summary}</figcaption>
    </figure>
  );
}

function formatBucket(seconds: number, interval: 'day' | 'hour'): string {
  const iso = new Date(seconds * 1000).toISOString();
  return interval === 'hour' ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : iso.slice(0, 10);
}
