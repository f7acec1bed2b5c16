/*
 * How many generated cases the property and fuzz tests run. The defaults keep the whole suite
 * under ten minutes on CI's 2-core machine. CASES_SCALE=5 runs five times as many cases, each
 * property allowed five times the time: a deeper run after changing a query planner, the filter
 * compiler or the request parsing (docs/development.md). A failure prints its seed and path, so
 * any case found deep can be replayed and kept as an example.
 */
const SCALE = Math.max(0.1, Number(process.env.CASES_SCALE ?? 1));

/** `n` cases at the default depth, scaled by CASES_SCALE (at least one). */
export const cases = (n: number): number => Math.max(1, Math.round(n * SCALE));

/** A property's time budget: fast-check stops generating (and passes) past it; scaled up, never down. */
export const caseTimeLimit = (ms: number): number => Math.round(ms * Math.max(1, SCALE));
