import { describe, expect, it } from 'vitest';
import { intervalOf, judge, lastCompletedInterval, nextState } from '../../src/core/alerts.js';

/** The condition rules and the intervals of alerts (docs/notifications.md "Alerts"), without a store. */
describe('judge', () => {
  it.each([
    // [condition, value, previous, holds]
    [{ type: 'above', value: 10 }, 10, null, false],
    [{ type: 'above', value: 10 }, 10.000001, null, true],
    [{ type: 'below', value: 10 }, 10, null, false],
    [{ type: 'below', value: 10 }, 9.5, null, true],
    // 10 % of 10 is 1: 11 meets it exactly, which a division (1 / 10 * 100 = 10.000000000000002) would not say reliably
    [{ type: 'increase', percent: 10 }, 11, 10, true],
    [{ type: 'increase', percent: 10 }, 10.99, 10, false],
    [{ type: 'decrease', percent: 10 }, 9, 10, true],
    [{ type: 'decrease', percent: 10 }, 9.01, 10, false],
    [{ type: 'increase', percent: 33 }, 133, 100, true],
    [{ type: 'decrease', percent: 100 }, 0, 7, true],
    // after a 0: a rise of any size holds, a fall never; 0 after 0 is no rise
    [{ type: 'increase', percent: 500 }, 1, 0, true],
    [{ type: 'increase', percent: 5 }, 0, 0, false],
    [{ type: 'decrease', percent: 5 }, 0, 0, false],
    [{ type: 'increase', percent: 5 }, 3, null, true],
    // no value meets nothing
    [{ type: 'above', value: -1 }, null, null, false],
    [{ type: 'decrease', percent: 5 }, null, 10, false],
  ] as const)('%j with %s after %s: %s', (condition, value, previous, holds) => {
    expect(judge(condition, value, previous).holds).toBe(holds);
  });

  it('gives the change in percent, and none after a 0', () => {
    expect(judge({ type: 'increase', percent: 1 }, 15, 10).changePercent).toBe(50);
    expect(judge({ type: 'decrease', percent: 1 }, 5, 10).changePercent).toBe(-50);
    expect(judge({ type: 'increase', percent: 1 }, 5, 0).changePercent).toBeNull();
  });
});

describe('states', () => {
  it('notifies on a change only: firing when it starts to hold, resolved when it stops', () => {
    expect(nextState('unknown', true)).toEqual({ state: 'firing', change: 'firing' });
    expect(nextState('unknown', false)).toEqual({ state: 'ok', change: null });
    expect(nextState('firing', true)).toEqual({ state: 'firing', change: null });
    expect(nextState('firing', false)).toEqual({ state: 'ok', change: 'resolved' });
    expect(nextState('ok', true)).toEqual({ state: 'firing', change: 'firing' });
  });
});

describe('intervals', () => {
  it('are UTC hours, days and weeks from Monday', () => {
    const at = new Date('2026-12-02T13:45:10Z'); // a Wednesday
    expect(intervalOf(at, 'hour').start.toISOString()).toBe('2026-12-02T13:00:00.000Z');
    expect(intervalOf(at, 'day').end.toISOString()).toBe('2026-12-03T00:00:00.000Z');
    expect(intervalOf(at, 'week').start.toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(lastCompletedInterval(at, 'week').start.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    expect(intervalOf(new Date('2026-11-29T23:59:59Z'), 'week').start.toISOString()).toBe('2026-11-23T00:00:00.000Z');
  });
});
