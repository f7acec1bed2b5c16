/**
 * A timestamp as every API answer, notification and webhook carries it: RFC 3339 in whole
 * seconds, UTC with `Z` (`2026-11-25T16:08:31Z`). The origin's server sent this form, and the
 * origin's Swift SDK decodes dates with Foundation's `.iso8601` strategy, which refuses fractional
 * seconds on the OS versions most apps still support. The fraction is dropped (truncated, so a
 * time never moves into the future); the stores keep their full precision, and every order that
 * needs it (cursors, sorting) is computed from the stored values, never from this text.
 */
export function apiTime(instant: Date | string): string {
  // The stores' and the API's own times are toISOString() text (`2026-11-25T16:08:31.123Z`):
  // cutting its fraction is the same truncation, without a Date (it was a visible share of
  // the batch answer, BENCHMARKS.md).
  if (typeof instant === 'string' && isCanonicalUtc(instant)) return `${instant.slice(0, 19)}Z`;
  const date = typeof instant === 'string' ? new Date(instant) : instant;
  const ms = date.getTime();
  return new Date(ms - mod(ms, 1000)).toISOString().replace('.000Z', 'Z');
}

/** `YYYY-MM-DDTHH:mm:ss.sssZ` with a four-digit year, as toISOString() writes years 0 to 9999. */
const isCanonicalUtc = (text: string) =>
  text.length === 24 && text[23] === 'Z' && text[19] === '.' && text[10] === 'T' && text[4] === '-' && text[0] !== '-' && text[0] !== '+';

/** apiTime of a value that may be null. */
export const apiTimeOrNull = (instant: Date | string | null): string | null => (instant === null ? null : apiTime(instant));

/** The remainder of a division, never negative (times before 1970 truncate towards the past too). */
const mod = (value: number, divisor: number) => ((value % divisor) + divisor) % divisor;
