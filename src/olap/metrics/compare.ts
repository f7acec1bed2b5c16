import type { Interval, Measure, MeasureValues } from './measures.js';
import type { ResolvedQuery } from './metrics.request.js';
import { type Bucket, bucketStart, bucketsOf, type CompareKind, compareWindow, type MetricsWindow, nextBucket } from './window.js';

/* `compare`: the earlier period of a request, its buckets aligned with the main answer's, and the change between them (docs/metrics.md). */

/** Buckets of `window`, exactly `count` of them: cut, or continued past the window (empty). */
export function alignedBuckets(window: MetricsWindow, interval: Interval, count: number): Bucket[] {
  const list = window.start < window.end ? bucketsOf(window, interval).slice(0, count) : [];
  let start = list.at(-1) ? nextBucket((list.at(-1) as Bucket).start, interval) : bucketStart(window.start, interval);
  while (list.length < count) {
    const end = nextBucket(start, interval);
    // Past the window's end: no day of it is read, so every count is 0 and every value null.
    list.push({ start, from: window.end, to: window.end });
    start = end;
  }
  return list;
}

/** The earlier period of a compare: its query (same filters and measures) and its block's echo. */
export function comparedQuery(p: ResolvedQuery, kind: CompareKind) {
  const window = compareWindow(p.window, kind, p.floor);
  const r: ResolvedQuery = { ...p, window, scope: { ...p.scope, start: window.start, end: window.end } };
  return {
    p: r,
    block: { date_from: window.dateFrom, date_to: window.dateTo, retention_clamped: window.retentionClamped },
  };
}

/** (now - before) / before for each measure; null when before is 0 or either is null. */
export function changeOf(measures: Measure[], now: MeasureValues, before: MeasureValues): Record<string, number | null> {
  return Object.fromEntries(
    measures.map((m) => {
      const a = now[m];
      const b = before[m];
      return [m, a === null || a === undefined || b === null || b === undefined || b === 0 ? null : (a - b) / b];
    }),
  );
}
