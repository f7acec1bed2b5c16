import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { COUNT_TICK_STEPS, timeAxisLabels } from '../lib/format';

const HEIGHT = 90;

/**
 * A small bar chart of counts per bucket (uPlot), updated in place as counts change rather than
 * redrawn from scratch. `times` are bucket starts in seconds; `summary` is what a screen reader
 * hears, the figure being drawn on a canvas.
 */
export function Sparkline({ times, counts, summary, label }: { times: number[]; counts: number[]; summary: string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  const figure = useRef<HTMLElement>(null);
  const chart = useRef<uPlot | null>(null);

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const made = new uPlot(
      {
        width: Math.max(element.clientWidth, 240),
        height: HEIGHT,
        legend: { show: false },
        cursor: { show: false },
        scales: {
          // Half a bucket of room on each side, so the first and last bars are drawn whole.
          x: { time: true, range: (_u, min, max) => [min - 30, max + 30] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max * 1.15)] },
        },
        axes: [
          {
            stroke: '#3d4451',
            grid: { show: false },
            size: 28,
            space: 70,
            font: '11px system-ui, sans-serif',
            values: (_u, splits, _axis, _space, step) => timeAxisLabels(splits, step),
          },
          {
            stroke: '#3d4451',
            grid: { stroke: '#e6e8ee' },
            size: 36,
            ticks: { show: false },
            font: '11px system-ui, sans-serif',
            incrs: COUNT_TICK_STEPS,
            // The canvas's tick labels, also said on the figure (data-y-ticks) for the tests.
            values: (_u, splits) => {
              figure.current?.setAttribute('data-y-ticks', splits.join(' '));
              return splits.map(String);
            },
          },
        ],
        series: [
          {},
          {
            label,
            stroke: '#3b5bdb',
            fill: '#3b5bdb55',
            width: 1,
            paths: uPlot.paths.bars?.({ size: [0.8, 12] }),
            points: { show: false },
          },
        ],
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      },
      [[], []],
      element,
    );
    made.root.querySelector('canvas')?.setAttribute('aria-hidden', 'true');
    chart.current = made;
    const resize = new ResizeObserver(() => {
      const next = Math.max(element.clientWidth, 240);
      if (next !== made.width) made.setSize({ width: next, height: HEIGHT });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      made.destroy();
      chart.current = null;
    };
  }, [label]);

  useEffect(() => {
    // An empty minute draws no bar (a zero-height bar would still draw its outline).
    chart.current?.setData([times, counts.map((n) => (n === 0 ? null : n))]);
  }, [times, counts]);

  return (
    <figure class="sparkline" aria-label={label} ref={figure}>
      <div ref={box} />
      <figcaption class="muted" data-testid="sparkline-summary">
        {summary}
      </figcaption>
    </figure>
  );
}
