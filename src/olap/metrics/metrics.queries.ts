import type { ClickHouseClient } from '../clickhouse.js';
import { queryRows } from '../query-rows.js';
import { chTime, clickhouseTimeToIso } from '../time.js';

/**
 * The ClickHouse side of the metrics API: one function per question, {name:Type} parameters
 * only. A "bucket" is 'total' (the whole window) or an interval; bucket expressions come from the
 * fixed maps below, never from request text. Rows carry their bucket start as ISO text.
 */
export type BucketSpec = 'total' | 'hour' | 'day' | 'week' | 'month';

export type Scope = {
  projectId: string;
  /** First instant of the window. */
  start: Date;
  /** First instant after the window. */
  end: Date;
};

/** Event names to count: null means every name. */
export type NameFilter = string[] | null;

const DAILY_BUCKET: Record<Exclude<BucketSpec, 'hour'>, string> = {
  total: `toDateTime({start:DateTime64(3, 'UTC')}, 'UTC')`,
  day: `toDateTime(day, 'UTC')`,
  week: `toDateTime(toMonday(day), 'UTC')`,
  month: `toDateTime(toStartOfMonth(day), 'UTC')`,
};

/** Bucket of a time column (`col`): the same calendar as the rollups, UTC, weeks from Monday. */
export function timeBucket(bucket: BucketSpec, col: string): string {
  switch (bucket) {
    case 'total':
      return `toDateTime({start:DateTime64(3, 'UTC')}, 'UTC')`;
    case 'hour':
      return `toStartOfHour(${col}, 'UTC')`;
    case 'day':
      return `toDateTime(toDate(${col}, 'UTC'), 'UTC')`;
    case 'week':
      return `toDateTime(toMonday(toDate(${col}, 'UTC')), 'UTC')`;
    case 'month':
      return `toDateTime(toStartOfMonth(toDate(${col}, 'UTC')), 'UTC')`;
  }
}

/** First instant after a bucket that starts at `b`, clipped to the window end. */
function bucketEnd(bucket: BucketSpec, b: string): string {
  const next: Record<BucketSpec, string> = {
    total: `{end:DateTime64(3, 'UTC')}`,
    hour: `${b} + INTERVAL 1 HOUR`,
    day: `${b} + INTERVAL 1 DAY`,
    week: `${b} + INTERVAL 7 DAY`,
    month: `addMonths(${b}, 1)`,
  };
  return `least(toDateTime64(${next[bucket]}, 6, 'UTC'), toDateTime64({end:DateTime64(3, 'UTC')}, 6, 'UTC'))`;
}

export const scopeParams = (scope: Scope) => ({ projectId: scope.projectId, start: chTime(scope.start), end: chTime(scope.end) });
export const nameCondition = (names: NameFilter) => (names === null ? '' : 'AND event_name IN {names:Array(String)}');

export type EventMeasureRow = { bucket: string; event_count: number; unique_event_users: number };

/**
 * event_count and unique_event_users per bucket, from the rollups: events_hourly for hours,
 * events_daily otherwise (the window is whole days). Unique users merge exact states.
 */
export async function eventMeasures(
  client: ClickHouseClient,
  scope: Scope,
  bucket: BucketSpec,
  names: NameFilter,
): Promise<EventMeasureRow[]> {
  const hourly = bucket === 'hour';
  const query = hourly
    ? `SELECT toString(hour) AS bucket, sum(events) AS event_count, uniqExactMerge(users) AS unique_event_users
       FROM events_hourly
       WHERE project_id = {projectId:UUID}
         AND hour >= {start:DateTime64(3, 'UTC')} AND hour < {end:DateTime64(3, 'UTC')} ${nameCondition(names)}
       GROUP BY hour`
    : `SELECT toString(${DAILY_BUCKET[bucket as Exclude<BucketSpec, 'hour'>]}) AS bucket,
              sum(events) AS event_count, uniqExactMerge(users) AS unique_event_users
       FROM events_daily
       WHERE project_id = {projectId:UUID}
         AND day >= toDate({start:DateTime64(3, 'UTC')}) AND day < toDate({end:DateTime64(3, 'UTC')}) ${nameCondition(names)}
       GROUP BY bucket`;
  const result = await queryRows<EventMeasureRow>(client, query, { ...scopeParams(scope), names: names ?? [] });
  return result.map((row) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

export type KeyedEventMeasureRow = { key: string | null; event_count: number; unique_event_users: number };

/** Event measures per event name over the window, from events_daily. */
export async function eventMeasuresByName(client: ClickHouseClient, scope: Scope, names: NameFilter): Promise<KeyedEventMeasureRow[]> {
  return queryRows<KeyedEventMeasureRow>(
    client,
    `SELECT toString(event_name) AS key, sum(events) AS event_count, uniqExactMerge(users) AS unique_event_users
     FROM events_daily
     WHERE project_id = {projectId:UUID}
       AND day >= toDate({start:DateTime64(3, 'UTC')}) AND day < toDate({end:DateTime64(3, 'UTC')}) ${nameCondition(names)}
     GROUP BY event_name`,
    { ...scopeParams(scope), names: names ?? [] },
  );
}

/**
 * Event measures per value of one top-level property, from raw events (no rollup can know every
 * property). String values are unquoted (an empty string stays ''); other values are their JSON
 * text; a missing key is null.
 */
export async function eventMeasuresByProperty(
  client: ClickHouseClient,
  scope: Scope,
  names: NameFilter,
  key: string,
): Promise<KeyedEventMeasureRow[]> {
  const result = await queryRows<KeyedEventMeasureRow>(
    client,
    `SELECT
       if(NOT JSONHas(properties_raw, {key:String}), NULL,
          if(JSONType(properties_raw, {key:String}) = 'String',
             JSONExtractString(properties_raw, {key:String}),
             JSONExtractRaw(properties_raw, {key:String}))) AS key,
       count() AS event_count, uniqExact(user_id) AS unique_event_users
     FROM events
     WHERE project_id = {projectId:UUID}
       AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')} ${nameCondition(names)}
     GROUP BY key`,
    { ...scopeParams(scope), names: names ?? [], key },
  );
  return result;
}

export type FeedbackMeasureRow = { bucket: string; feedback_count: number; vote_count: number; comment_count: number };

const FEEDBACK_MEASURE_COLUMNS = `
  countIf(kind = 'feedback_created') AS feedback_count,
  toInt64(countIf(kind = 'vote_added')) - toInt64(countIf(kind = 'vote_removed')) AS vote_count,
  countIf(kind = 'comment_added') AS comment_count`;

/** Items created, votes added net of removals, and comments added, per bucket, from facts. */
export async function feedbackMeasures(client: ClickHouseClient, scope: Scope, bucket: BucketSpec): Promise<FeedbackMeasureRow[]> {
  const result = await queryRows<FeedbackMeasureRow>(
    client,
    `SELECT toString(${timeBucket(bucket, 'occurred_at')}) AS bucket, ${FEEDBACK_MEASURE_COLUMNS}
     FROM facts
     WHERE project_id = {projectId:UUID}
       AND kind IN ('feedback_created', 'vote_added', 'vote_removed', 'comment_added')
       AND occurred_at >= {start:DateTime64(3, 'UTC')} AND occurred_at < {end:DateTime64(3, 'UTC')}
     GROUP BY bucket`,
    scopeParams(scope),
  );
  return result.map((row) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

export type KeyedFeedbackMeasureRow = { key: string | null; feedback_count: number; vote_count: number; comment_count: number };

/**
 * Feedback measures split by the item's category, or by its status as of the window's end (the
 * latest status set before then; items start pending).
 */
export async function feedbackMeasuresBy(
  client: ClickHouseClient,
  scope: Scope,
  dimension: 'category' | 'status',
): Promise<KeyedFeedbackMeasureRow[]> {
  const dimensionColumn = dimension === 'category' ? 'd.category' : 'd.status';
  return queryRows<KeyedFeedbackMeasureRow>(
    client,
    `WITH d AS (
       SELECT feedback_id,
              argMaxIf(category, (occurred_at, fact_id), kind = 'feedback_created') AS category,
              argMaxIf(status, (occurred_at, fact_id), occurred_at < {end:DateTime64(3, 'UTC')}) AS status
       FROM facts
       WHERE project_id = {projectId:UUID} AND kind IN ('feedback_created', 'feedback_status_changed')
       GROUP BY feedback_id
     )
     SELECT toString(${dimensionColumn}) AS key, ${FEEDBACK_MEASURE_COLUMNS}
     FROM facts AS f
     INNER JOIN d ON d.feedback_id = f.feedback_id
     WHERE f.project_id = {projectId:UUID}
       AND f.kind IN ('feedback_created', 'vote_added', 'vote_removed', 'comment_added')
       AND f.occurred_at >= {start:DateTime64(3, 'UTC')} AND f.occurred_at < {end:DateTime64(3, 'UTC')}
     GROUP BY key`,
    scopeParams(scope),
  );
}

export type SdkUserDeltaRow = {
  bucket: string;
  /** Users whose first registration falls in the bucket. */
  new_users: number;
  /** Change of the sum of users' latest MRR. */
  mrr_delta: number;
  /** Change of the number of users whose latest MRR is > 0. */
  paying_delta: number;
};

/**
 * Changes of the point-in-time SDK-user measures per bucket, from every registration fact up to
 * the window's end: each fact contributes the difference to the same user's previous one. Facts
 * before the window fall in the bucket '1970-01-01': their sum is the state at the window's start.
 * Running sums of these rows give sdk_users, paying_users and total_mrr at each bucket's end.
 */
export async function sdkUserDeltas(client: ClickHouseClient, scope: Scope, bucket: BucketSpec): Promise<SdkUserDeltaRow[]> {
  const result = await queryRows<SdkUserDeltaRow>(
    client,
    `SELECT toString(if(occurred_at < {start:DateTime64(3, 'UTC')}, toDateTime(0, 'UTC'), ${timeBucket(bucket, 'occurred_at')})) AS bucket,
            sum(is_first) AS new_users, sum(mrr_delta) AS mrr_delta, sum(paying_delta) AS paying_delta
     FROM (
       SELECT occurred_at,
              ifNull(mrr, 0) AS m,
              m - lagInFrame(m, 1, 0) OVER w AS mrr_delta,
              toInt64(m > 0) - toInt64(lagInFrame(m, 1, 0) OVER w > 0) AS paying_delta,
              toUInt64(row_number() OVER w = 1) AS is_first
       FROM facts
       WHERE project_id = {projectId:UUID} AND kind = 'sdk_user_registered' AND occurred_at < {end:DateTime64(3, 'UTC')}
       WINDOW w AS (PARTITION BY user_id ORDER BY occurred_at, fact_id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
     )
     GROUP BY bucket`,
    scopeParams(scope),
  );
  return result.map((row) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

export type ActiveUsersRow = { bucket: string; active_sdk_users: number };

/** Users registered or updated within each bucket. */
export async function activeSdkUsers(client: ClickHouseClient, scope: Scope, bucket: BucketSpec): Promise<ActiveUsersRow[]> {
  const result = await queryRows<ActiveUsersRow>(
    client,
    `SELECT toString(${timeBucket(bucket, 'occurred_at')}) AS bucket, uniqExact(user_id) AS active_sdk_users
     FROM facts
     WHERE project_id = {projectId:UUID} AND kind = 'sdk_user_registered'
       AND occurred_at >= {start:DateTime64(3, 'UTC')} AND occurred_at < {end:DateTime64(3, 'UTC')}
     GROUP BY bucket`,
    scopeParams(scope),
  );
  return result.map((row) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

export type VoterMrrRow = { bucket: string; voter_mrr: number };

/**
 * For each bucket: the sum of the latest MRR, as of the bucket's end, of the users who added a
 * vote within the bucket. ASOF JOIN finds each voter's last registration before that end.
 */
export async function voterMrr(client: ClickHouseClient, scope: Scope, bucket: BucketSpec): Promise<VoterMrrRow[]> {
  const result = await queryRows<VoterMrrRow>(
    client,
    `SELECT toString(v.bucket) AS bucket, sum(ifNull(r.mrr, 0)) AS voter_mrr
     FROM (
       SELECT DISTINCT ${timeBucket(bucket, 'occurred_at')} AS bucket, user_id,
              ${bucketEnd(bucket, timeBucket(bucket, 'occurred_at'))} AS bucket_end
       FROM facts
       WHERE project_id = {projectId:UUID} AND kind = 'vote_added'
         AND occurred_at >= {start:DateTime64(3, 'UTC')} AND occurred_at < {end:DateTime64(3, 'UTC')}
     ) AS v
     ASOF LEFT JOIN (
       -- One row per user and instant (the last fact of that instant), so the join's match on
       -- time alone agrees with the (occurred_at, fact_id) order the other measures use.
       SELECT user_id, occurred_at AS at, argMax(mrr, fact_id) AS mrr
       FROM facts
       WHERE project_id = {projectId:UUID} AND kind = 'sdk_user_registered' AND occurred_at < {end:DateTime64(3, 'UTC')}
       GROUP BY user_id, occurred_at
     ) AS r
     ON v.user_id = r.user_id AND v.bucket_end > r.at
     GROUP BY v.bucket`,
    scopeParams(scope),
  );
  return result.map((row) => ({ ...row, bucket: clickhouseTimeToIso(row.bucket) }));
}

export type FeedEventRow = {
  id: string;
  event_name: string;
  user_id: string;
  properties_raw: string;
  /** DateTime64 text, the cursor's time. */
  created: string;
};

/**
 * One page of the raw event feed, newest first. The cursor is the (created_at, event_id) of the
 * last row of the previous page: the sort key is unique, so paging neither repeats nor skips a
 * row, however many events arrive meanwhile.
 */
export async function eventFeed(
  client: ClickHouseClient,
  scope: Scope,
  filters: { event?: string | undefined; userId?: string | undefined; after?: { createdAt: string; eventId: string } | undefined },
  limit: number,
): Promise<FeedEventRow[]> {
  return queryRows<FeedEventRow>(
    client,
    // Output names differ from the columns: ClickHouse would resolve WHERE against the aliases.
    `SELECT toString(event_id) AS id, event_name, user_id, properties_raw, toString(created_at) AS created
     FROM events
     WHERE project_id = {projectId:UUID}
       AND created_at >= {start:DateTime64(3, 'UTC')} AND created_at < {end:DateTime64(3, 'UTC')}
       ${filters.event !== undefined ? 'AND event_name = {event:String}' : ''}
       ${filters.userId !== undefined ? 'AND user_id = {userId:String}' : ''}
       ${filters.after ? "AND (created_at, event_id) < ({afterTime:DateTime64(3, 'UTC')}, {afterId:UUID})" : ''}
     ORDER BY created_at DESC, event_id DESC
     LIMIT {limit:UInt32}`,
    {
      ...scopeParams(scope),
      event: filters.event,
      userId: filters.userId,
      afterTime: filters.after?.createdAt,
      afterId: filters.after?.eventId,
      limit,
    },
  );
}
