/*
 * Times for the fixtures of the dashboard tests, counted from one instant (NOW, when the file
 * loads), so a file that runs across midnight UTC asks for the days it seeded.
 *
 * Each fixture day's events sit at one time of the day: noon, or, while today is not yet 12 hours
 * and 10 minutes old, 10 minutes before NOW's time of day. Today's events are then never more than
 * minutes ahead of the clock (the API refuses a timestamp more than an hour ahead: a fixture at
 * today's noon, seeded in the morning, lost its today's events and every count with them).
 */
const DAY_MS = 86_400_000;
export const NOW = Date.now();
const todayStart = NOW - (NOW % DAY_MS);
const TIME_OF_DAY_MS = Math.min(12 * 3_600_000, Math.max(0, NOW - todayStart - 10 * 60_000));

/** `daysAgo` days before NOW's UTC day, at the fixtures' time of day, plus `seconds`. */
export function fixtureTime(daysAgo: number, seconds = 0): string {
  return new Date(todayStart - daysAgo * DAY_MS + TIME_OF_DAY_MS + seconds * 1000).toISOString();
}

/** The UTC date (YYYY-MM-DD) `daysAgo` days before NOW. */
export const fixtureDay = (daysAgo: number): string => new Date(NOW - daysAgo * DAY_MS).toISOString().slice(0, 10);
