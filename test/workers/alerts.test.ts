import { pino } from 'pino';
import { beforeAll, describe, expect, it } from 'vitest';
import { AlertEvaluator } from '../../src/workers/alerts.evaluator.js';
import { createProject, setPlan, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/**
 * The alert evaluator on a test clock (docs/notifications.md "Alerts"): each step moves the clock
 * past one interval's end and runs one round, as the workers' loop would. Events are tracked with
 * timestamps on the days the clock walks through.
 */
const server = useTestServer();

const DAY = 24 * 3600 * 1000;
const HOUR = 3600 * 1000;
/** The first day the clock walks through: far enough back for every interval to lie in the past. */
const BASE = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate()) - 20 * DAY;
const day = (n: number) => new Date(BASE + n * DAY);
const isoDay = (date: Date) => date.toISOString().slice(0, 10);
/** Just after day n ended and settled (the evaluator waits a minute). */
const afterDay = (n: number) => new Date(BASE + (n + 1) * DAY + 61_000);

let clock = new Date();
const logger = pino({ level: 'silent' });
const evaluator = () => new AlertEvaluator(server.sql, server.clickhouse, logger, { now: () => clock });

async function track(project: TestProject, events: { eventName: string; userId: string; timestamp: string; properties?: object }[]) {
  for (let i = 0; i < events.length; i += 500) {
    const response = await server.request('POST', '/api/v1/events/batch', {
      apiKey: project.apiKey,
      body: { events: events.slice(i, i + 500) },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
  }
  await server.eventsVisible();
}

/** `count` events named `name` at noon of day n, by distinct users. */
const times = (name: string, n: number, count: number, props: object = {}) =>
  Array.from({ length: count }, (_, i) => ({
    eventName: name,
    userId: `${name}-u${i}`,
    timestamp: new Date(day(n).getTime() + 12 * HOUR + i * 1000).toISOString(),
    properties: props,
  }));

async function createAlert(project: TestProject, body: Record<string, unknown>) {
  const r = await server.request('POST', `/api/v1/projects/${project.id}/alerts`, {
    bearer: project.account.adminToken,
    body: { name: 'alert', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { id: string };
}

async function checks(project: TestProject, alertId: string) {
  const r = await server.request('GET', `/api/v1/projects/${project.id}/alerts/${alertId}/checks`, { bearer: project.account.adminToken });
  expect(r.status).toBe(200);
  return (r.body as Record<string, unknown>[]).reverse();
}

async function step(n: number) {
  clock = afterDay(n);
  return evaluator().runOnce();
}

let pro: TestProject;

beforeAll(async () => {
  // The service's own evaluator runs on the wall clock: stopped, so that only the test clock checks.
  await server.workers?.alerts.stop();
  pro = await createProject(server, { plan: 'team' }); // Team: room for the 50 alerts these tests make
  await track(pro, [
    // firing (5 > 2), staying (4), resolved (1), firing again (3)
    ...times('signup', 0, 5),
    ...times('signup', 1, 4),
    ...times('signup', 2, 1),
    ...times('signup', 3, 3),
    // exact thresholds: 10 then 15 (a rise of exactly 50 %), and 10 then 5 (a fall of exactly 50 %)
    ...times('rise', 2, 10),
    ...times('rise', 3, 15),
    ...times('fall', 2, 10),
    ...times('fall', 3, 5),
    // after a 0: nothing on day 2, 2 on day 3
    ...times('fresh', 3, 2),
  ]);
});

describe('state changes on a test clock', () => {
  it('firing, staying, resolved, firing again: 3 notifications', async () => {
    clock = day(0);
    const alert = await createAlert(pro, {
      measure: 'event_count',
      event: 'signup',
      interval: 'day',
      condition: { type: 'above', value: 2 },
    });
    for (const n of [0, 1, 2, 3]) await step(n);
    const list = await checks(pro, alert.id);
    expect(list.map((c) => [c.interval_start, c.value, c.state, c.notified])).toEqual([
      [`${isoDay(day(0))}T00:00:00Z`, 5, 'firing', 'firing'],
      [`${isoDay(day(1))}T00:00:00Z`, 4, 'firing', null],
      [`${isoDay(day(2))}T00:00:00Z`, 1, 'ok', 'resolved'],
      [`${isoDay(day(3))}T00:00:00Z`, 3, 'firing', 'firing'],
    ]);
    expect(list.filter((c) => c.notified !== null)).toHaveLength(3);
    const r = await server.request('GET', `/api/v1/projects/${pro.id}/alerts/${alert.id}`, { bearer: pro.account.adminToken });
    expect(r.body).toMatchObject({ state: 'firing', last_value: 3, last_checked_at: expect.any(String) });
    // The same interval again: nothing new.
    await step(3);
    expect(await checks(pro, alert.id)).toHaveLength(4);
  });

  it.each([
    ['above', { type: 'above', value: 15 }, 'rise', 'ok'],
    ['below', { type: 'below', value: 15 }, 'rise', 'ok'],
    ['above, one less', { type: 'above', value: 14 }, 'rise', 'firing'],
    ['increase of exactly 50 %', { type: 'increase', percent: 50 }, 'rise', 'firing'],
    ['increase of 51 %', { type: 'increase', percent: 51 }, 'rise', 'ok'],
    ['decrease of exactly 50 %', { type: 'decrease', percent: 50 }, 'fall', 'firing'],
    ['decrease of 51 %', { type: 'decrease', percent: 51 }, 'fall', 'ok'],
  ])('a threshold met exactly: %s', async (_, condition, event, state) => {
    clock = day(2);
    const alert = await createAlert(pro, { measure: 'event_count', event, interval: 'day', condition });
    await step(3);
    const [check] = await checks(pro, alert.id);
    expect(check).toMatchObject({ state, notified: state === 'firing' ? 'firing' : null, skipped: 0 });
    if (condition.type === 'increase') expect(check?.change_percent).toBe(50);
    if (condition.type === 'decrease') expect(check?.change_percent).toBe(-50);
  });

  it('a 0 in the interval before: no percentage; an increase holds for any value above 0, a decrease never', async () => {
    clock = day(2);
    const up = await createAlert(pro, {
      measure: 'event_count',
      event: 'fresh',
      interval: 'day',
      condition: { type: 'increase', percent: 1000 },
    });
    const down = await createAlert(pro, {
      measure: 'event_count',
      event: 'fresh',
      interval: 'day',
      condition: { type: 'decrease', percent: 10 },
    });
    const flat = await createAlert(pro, {
      measure: 'event_count',
      event: 'fresh',
      interval: 'day',
      condition: { type: 'increase', percent: 10 },
    });
    await step(3);
    expect((await checks(pro, up.id))[0]).toMatchObject({ value: 2, previous_value: 0, change_percent: null, state: 'firing' });
    expect((await checks(pro, down.id))[0]).toMatchObject({ value: 2, previous_value: 0, change_percent: null, state: 'ok' });
    // 0 after 0 (day 2 after day 1) is no rise.
    const flatChecks = await checks(pro, flat.id);
    expect(flatChecks[0]).toMatchObject({ value: 2, state: 'firing' });
    clock = day(1);
    const still = await createAlert(pro, {
      measure: 'event_count',
      event: 'fresh',
      interval: 'day',
      condition: { type: 'increase', percent: 10 },
    });
    await step(2);
    expect((await checks(pro, still.id))[0]).toMatchObject({
      value: 0,
      previous_value: 0,
      change_percent: null,
      state: 'ok',
      notified: null,
    });
  });

  it('after a stop only the latest completed interval is checked, and the check records what was skipped', async () => {
    clock = day(0);
    const alert = await createAlert(pro, {
      measure: 'event_count',
      event: 'signup',
      interval: 'day',
      condition: { type: 'above', value: 100 },
    });
    await step(0);
    await step(5);
    const list = await checks(pro, alert.id);
    expect(list.map((c) => [c.interval_start, c.skipped])).toEqual([
      [`${isoDay(day(0))}T00:00:00Z`, 0],
      [`${isoDay(day(5))}T00:00:00Z`, 4],
    ]);
  });

  it('two evaluators at once check each interval once', async () => {
    clock = day(0);
    const alerts = await Promise.all(
      Array.from({ length: 6 }, () =>
        createAlert(pro, { measure: 'event_count', event: 'signup', interval: 'day', condition: { type: 'above', value: 2 } }),
      ),
    );
    clock = afterDay(0);
    const [a, b] = await Promise.all([evaluator().runOnce(), evaluator().runOnce()]);
    const ids = new Set(alerts.map((alert) => alert.id));
    const mine = [...a, ...b].filter((check) => ids.has(check.alert_id));
    expect(mine).toHaveLength(6);
    for (const alert of alerts) expect(await checks(pro, alert.id)).toHaveLength(1);
  });

  it('an alert of a project downgraded to Free is kept and not checked', async () => {
    const project = await createProject(server, { plan: 'pro' });
    clock = day(0);
    const alert = await createAlert(project, { measure: 'event_count', interval: 'day', condition: { type: 'below', value: 1 } });
    await setPlan(server, project.account, 'free');
    await step(0);
    expect(await checks(project, alert.id)).toHaveLength(0);
    const r = await server.request('GET', `/api/v1/projects/${project.id}/alerts`, { bearer: project.account.adminToken });
    expect(r.body).toHaveLength(1);
  });
});

describe('the value is what the metrics API answers for the interval', () => {
  let team: TestProject;
  beforeAll(async () => {
    team = await createProject(server, { plan: 'team' });
    await track(team, [
      ...times('buy', 4, 6, { amount: 10, plan: 'pro' }),
      ...times('buy', 4, 3, { amount: 2.5, plan: 'free' }),
      { eventName: 'view', userId: 'buy-u0', timestamp: new Date(day(4).getTime() + 13 * HOUR).toISOString() },
      { eventName: 'view', userId: 'buy-u0', timestamp: new Date(day(4).getTime() + 14 * HOUR + 1).toISOString() },
    ]);
  });

  const filters = [{ property: 'properties.plan', op: 'eq', value: 'pro' }];
  it.each([
    ['event_count', undefined, filters],
    ['unique_event_users', 'buy', []],
    ['sum:amount', 'buy', []],
    ['sessions', undefined, []],
    ['dau', undefined, filters],
  ])('%s, day interval', async (measure, event, list) => {
    clock = day(3);
    const alert = await createAlert(team, {
      measure,
      event: event ?? null,
      filters: list,
      interval: 'day',
      condition: { type: 'above', value: 0 },
    });
    await step(4);
    const [check] = await checks(team, alert.id);
    const query = new URLSearchParams({ date_from: isoDay(day(4)), date_to: isoDay(day(4)), measures: measure });
    if (event) query.set('event', event);
    if (list.length > 0) query.set('filters', JSON.stringify(list));
    const r = await server.request('GET', `/api/v1/projects/${team.id}/metrics/summary?${query}`, { bearer: team.account.adminToken });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(check?.value).toBe(r.body.measures[measure]);
    expect(check?.value).toBeGreaterThan(0);
  });

  it('an hour interval: the hour bucket of the timeseries', async () => {
    clock = new Date(day(4).getTime() + 11 * HOUR);
    const alert = await createAlert(team, { measure: 'event_count', interval: 'hour', condition: { type: 'above', value: 5 } });
    clock = new Date(day(4).getTime() + 13 * HOUR + 61_000);
    await evaluator().runOnce();
    const [check] = await checks(team, alert.id);
    expect(check?.interval_start).toBe(`${isoDay(day(4))}T12:00:00Z`);
    const r = await server.request(
      'GET',
      `/api/v1/projects/${team.id}/metrics/timeseries?interval=hour&date_from=${isoDay(day(4))}&date_to=${isoDay(day(4))}&measures=event_count`,
      { bearer: team.account.adminToken },
    );
    const bucket = r.body.buckets.find((b: { start: string }) => b.start === `${isoDay(day(4))}T12:00:00Z`);
    expect(check?.value).toBe(bucket.measures.event_count);
    expect(check).toMatchObject({ value: 9, state: 'firing' });
  });

  it('a window clamped by the plan: the weekly mau of the week before reads no further back than the allowance', async () => {
    // Pro reads 30 days back from date_to. Two weeks W1, W2: W1's 30 trailing days reach 9 days
    // before that allowance, so a user seen only there counts in W1 alone, not in the pair.
    const project = await createProject(server, { plan: 'pro' });
    const monday = (() => {
      const d = day(0);
      return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * DAY);
    })();
    const w1 = new Date(monday.getTime() - 7 * DAY);
    const early = new Date(monday.getTime() - 26 * DAY + 12 * HOUR).toISOString();
    await track(project, [
      { eventName: 'feedback_list', userId: 'early', timestamp: early },
      { eventName: 'feedback_list', userId: 'w1', timestamp: new Date(w1.getTime() + 12 * HOUR).toISOString() },
      { eventName: 'feedback_list', userId: 'w2', timestamp: new Date(monday.getTime() + 12 * HOUR).toISOString() },
    ]);
    clock = monday;
    const alert = await createAlert(project, { measure: 'mau', interval: 'week', condition: { type: 'increase', percent: 10 } });
    clock = new Date(monday.getTime() + 7 * DAY + 61_000);
    await evaluator().runOnce();
    const [check] = await checks(project, alert.id);
    const sunday = isoDay(new Date(monday.getTime() + 6 * DAY));
    const pair = await server.request(
      'GET',
      `/api/v1/projects/${project.id}/metrics/timeseries?interval=week&date_from=${isoDay(w1)}&date_to=${sunday}&measures=mau`,
      { bearer: project.account.adminToken },
    );
    expect(pair.body.buckets.map((b: { measures: { mau: number } }) => b.measures.mau)).toEqual([check?.previous_value, check?.value]);
    const alone = await server.request(
      'GET',
      `/api/v1/projects/${project.id}/metrics/summary?date_from=${isoDay(w1)}&date_to=${isoDay(new Date(monday.getTime() - DAY))}&measures=mau`,
      { bearer: project.account.adminToken },
    );
    // W1 alone: early and w1; in the pair the allowance leaves early out.
    expect(alone.body.measures.mau).toBe(2);
    expect(check).toMatchObject({ previous_value: 1, value: 2 });
  });
});
