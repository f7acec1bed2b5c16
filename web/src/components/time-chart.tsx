import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { COUNT_TICK_STEPS, formatDate, formatDateTime, timeAxisLabels } from '../lib/format';
import { bucketEndMs, type ChartInterval } from '../lib/intervals';

/**
 * A line of the chart. `dash` draws it dashed (the earlier period of a comparison); a null value
 * is a gap (a bucket with no numeric value).
 */
export type Series = { label: string; values: (number | null)[]; color: string; dash?: number[] };
/** A moment marked on the chart with a vertical line and a short label (a ship date). */
export type ChartMark = { time: number; label: string };

/** Marks the chart timing reads: the API's answer arrived → the chart is drawn. */
export const CHART_MARKS = { response: 'timeseries-response', drawn: 'timeseries-drawn', measure: 'timeseries-draw' } as const;

const PARTIAL_FILL = 'rgba(84, 91, 107, 0.08)';
const MARK_COLOR = '#17603a';
const NO_MARKS: ChartMark[] = [];

/**
 * A time series chart (uPlot: canvas, made for many points). `times` are bucket starts in
 * seconds. The figure carries a text summary for screen readers; the numbers are in the tables.
 *
 * `partialIndex` is the bucket still filling up (today, this hour): its line is dashed and its
 * column shaded, so a count "so far" does not read as a drop. After uPlot has drawn, the figure
 * says what it drew in `data-drawn` (`day:30`): tests wait for that, not for the summary text,
 * which is rendered before the canvas exists.
 */
export function TimeChart({
  times,
  series,
  interval,
  summary,
  partialIndex,
  marks = NO_MARKS,
  secondary = false,
  label,
}: {
  times: number[];
  series: Series[];
  interval: ChartInterval;
  summary: string;
  partialIndex: number | null;
  /** Moments to mark (seconds); the caller says them in `summary` too, for screen readers. */
  marks?: ChartMark[];
  /**
   * A second chart on the page (the sessions chart): its own class, so the page's main chart
   * stays `figure.chart`, and it records no timing marks, which measure the main chart's drawing.
   */
  secondary?: boolean;
  /** The figure's name (default: the main chart's, or the sessions chart's when secondary). */
  label?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const figure = useRef<HTMLElement>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const width = Math.max(element.clientWidth, 280);
    const last = times[times.length - 1];
    // The last bucket's point stands for the whole bucket: a mark inside it (an item completed
    // today, after the day's start) is drawn at that point, not skipped for lying right of it.
    const lastEnd = last === undefined ? Number.NEGATIVE_INFINITY : bucketEndMs(last * 1000, interval) / 1000;
    // What the last draw did, said on the figure: the marks counted are those drawMarks drew.
    let marksDrawn = 0;
    const options: uPlot.Options = {
      width,
      height: 280,
      // Room above the plot for the "so far" label, so it covers no line and no edge cuts it.
      padding: [partialIndex === null ? null : 24, null, null, null],
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.1)] } },
      axes: [
        {
          stroke: '#3d4451',
          grid: { stroke: '#e6e8ee' },
          space: interval === 'hour' ? 90 : 60,
          // The tick labels, also said on the figure (data-x-ticks) for the tests: the canvas hides them.
          values: (_u, splits, _axis, _space, step) => {
            const labels = timeAxisLabels(splits, step);
            figure.current?.setAttribute('data-x-ticks', labels.join('|'));
            return labels;
          },
        },
        { stroke: '#3d4451', grid: { stroke: '#e6e8ee' }, size: 56, incrs: COUNT_TICK_STEPS },
      ],
      series: [
        { label: INTERVAL_LABELS[interval], value: (_u, v) => (v === null ? '—' : formatBucket(v, interval)) },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(s.dash ? { dash: s.dash } : { fill: `${s.color}1f` }),
          points: { show: false },
        })),
        // The partial bucket's segment, dashed, one series per measure (null elsewhere).
        ...(partialIndex === null
          ? []
          : series.map((s) => ({
              label: `${s.label} (so far)`,
              ...(s.dash ? { show: false } : {}),
              stroke: s.color,
              width: 2,
              dash: [6, 5],
              points: { show: true, size: 6 },
            }))),
      ],
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      hooks: {
        drawClear: [(u) => shadePartial(u, times, partialIndex)],
        draw: [
          (u) => labelPartial(u, partialIndex),
          (u) => {
            marksDrawn = drawMarks(u, marks, lastEnd);
          },
          () => {
            figure.current?.setAttribute('data-drawn', `${interval}:${times.length}${marks.length > 0 ? `:marks=${marksDrawn}` : ''}`);
            // Only the first draw after new data counts: resizing redraws too.
            if (
              !secondary &&
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
    const chart = new uPlot(options, chartData(times, series, partialIndex), element);
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
      figure.current?.removeAttribute('data-drawn');
      chart.destroy();
    };
  }, [times, series, interval, summary, partialIndex, marks, secondary]);

  return (
    <figure
      class={secondary ? 'chart-secondary' : 'chart'}
      aria-label={label ?? (secondary ? 'Sessions chart' : 'Time series chart')}
      ref={figure}
      data-interval={interval}
    >
      <div ref={box} class="chart-canvas" />
      <figcaption class="visually-hidden">{summary}</figcaption>
    </figure>
  );
}

/**
 * The columns uPlot draws: solid lines up to the last complete bucket, and for the partial bucket
 * a dashed segment from the last complete one to it.
 */
function chartData(times: number[], series: Series[], partialIndex: number | null): uPlot.AlignedData {
  if (partialIndex === null) return [times, ...series.map((s) => s.values)];
  // A comparison's earlier period (dashed) is over: drawn whole, with no "so far" segment.
  const solid = series.map((s) => (s.dash ? s.values : s.values.map((v, i) => (i === partialIndex ? null : v))));
  const dashed = series.map((s) =>
    s.dash ? s.values.map(() => null) : s.values.map((v, i) => (i === partialIndex || i === partialIndex - 1 ? v : null)),
  );
  return [times, ...solid, ...dashed];
}

/** Shades the dashed segment that leads to the partial bucket, under the lines. */
function shadePartial(u: uPlot, times: number[], partialIndex: number | null) {
  if (partialIndex === null) return;
  const start = times[partialIndex - 1] ?? times[partialIndex];
  if (start === undefined) return;
  const left = u.valToPos(start, 'x', true);
  const right = u.bbox.left + u.bbox.width;
  const { ctx } = u;
  ctx.save();
  ctx.fillStyle = PARTIAL_FILL;
  ctx.fillRect(left, u.bbox.top, Math.max(right - left, 4 * devicePixelRatio), u.bbox.height);
  ctx.restore();
}

/**
 * "so far" above the partial bucket, in the band the chart's top padding keeps free: inside the
 * plot it would cover the lines' highest points, and at the canvas edge it was cut.
 */
function labelPartial(u: uPlot, partialIndex: number | null) {
  if (partialIndex === null) return;
  const { ctx } = u;
  const px = devicePixelRatio;
  ctx.save();
  ctx.font = `${12 * px}px system-ui, sans-serif`;
  ctx.fillStyle = '#545b6b';
  ctx.textAlign = 'right';
  ctx.textBaseline = 'bottom';
  ctx.fillText('so far', u.bbox.left + u.bbox.width, u.bbox.top - 6 * px);
  ctx.restore();
}

/**
 * A dashed vertical line and its label at each mark inside the buckets drawn, over the lines; a
 * mark inside the last bucket (after its start, before `lastEnd`) is drawn at its point.
 */
function drawMarks(u: uPlot, marks: ChartMark[], lastEnd: number): number {
  const { ctx } = u;
  const [min, max] = [u.scales.x?.min, u.scales.x?.max];
  if (min === undefined || max === undefined) return 0;
  let drawn = 0;
  ctx.save();
  ctx.strokeStyle = MARK_COLOR;
  ctx.fillStyle = MARK_COLOR;
  ctx.lineWidth = 2 * devicePixelRatio;
  ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
  ctx.font = `600 ${12 * devicePixelRatio}px system-ui, sans-serif`;
  for (const [index, mark] of marks.entries()) {
    if (mark.time < min || mark.time >= lastEnd) continue;
    const x = Math.round(u.valToPos(Math.min(mark.time, max), 'x', true));
    drawn++;
    ctx.beginPath();
    ctx.moveTo(x, u.bbox.top);
    ctx.lineTo(x, u.bbox.top + u.bbox.height);
    ctx.stroke();
    // Labels of marks close together are staggered so they do not print over each other.
    const right = x + 4 * devicePixelRatio + ctx.measureText(mark.label).width > u.bbox.left + u.bbox.width;
    ctx.textAlign = right ? 'right' : 'left';
    ctx.fillText(mark.label, x + (right ? -4 : 4) * devicePixelRatio, u.bbox.top + (14 + (index % 3) * 14) * devicePixelRatio);
  }
  ctx.restore();
  return drawn;
}

const INTERVAL_LABELS: Record<ChartInterval, string> = { hour: 'Hour', day: 'Day', week: 'Week of', month: 'Month of' };

/** The legend's bucket, written as every page writes dates. */
function formatBucket(seconds: number, interval: ChartInterval): string {
  const iso = new Date(seconds * 1000).toISOString();
  return interval === 'hour' ? formatDateTime(iso) : formatDate(iso);
}
