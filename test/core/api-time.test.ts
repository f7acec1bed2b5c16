import { describe, expect, it } from 'vitest';
import { apiTime } from '../../src/core/time.js';

/** The answer's time format (src/core/time.ts): whole seconds, truncated, `Z`. */
describe('apiTime', () => {
  it('cuts the fraction of toISOString text exactly as it truncates a Date', () => {
    // Times across the years toISOString writes with four digits, and the edges of a second.
    const instants = [0, 999, 1000, -1, -999, -1001, Date.UTC(1969, 11, 31, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999)];
    for (let i = 0; i < 2000; i++) instants.push(Math.floor((Math.random() - 0.3) * 2 ** 45));
    for (const ms of instants) {
      const date = new Date(ms);
      expect(apiTime(date.toISOString())).toBe(apiTime(date));
    }
    expect(apiTime('2026-11-25T16:08:31.999Z')).toBe('2026-11-25T16:08:31Z');
    expect(apiTime('1969-12-31T23:59:59.500Z')).toBe('1969-12-31T23:59:59Z');
  });

  it('reads other forms of a time through Date', () => {
    expect(apiTime('2026-11-25T18:08:31.750+02:00')).toBe('2026-11-25T16:08:31Z');
    expect(apiTime('+010000-01-01T00:00:00.500Z')).toBe('+010000-01-01T00:00:00Z');
    expect(apiTime('2026-11-25 16:08:31.123')).toBe(new Date('2026-11-25 16:08:31.123').toISOString().replace(/\.\d{3}Z$/, 'Z'));
  });
});
