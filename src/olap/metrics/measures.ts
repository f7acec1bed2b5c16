/** Predefined event names, readable on every tier (SPEC 6). */
export const PREDEFINED_EVENTS = ['feedback_list', 'feedback_detail', 'submit_feedback'] as const;
export const isPredefinedEvent = (name: string) => (PREDEFINED_EVENTS as readonly string[]).includes(name);

export const EVENT_MEASURES = ['event_count', 'unique_event_users'] as const;
export const FEEDBACK_MEASURES = ['feedback_count', 'vote_count', 'comment_count'] as const;
/** SDK-user and revenue measures: admin-token surface only. */
export const ADMIN_MEASURES = ['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr', 'voter_mrr'] as const;
/** Sessions of the window's events (docs/sessions.md); both surfaces. */
export const SESSION_MEASURES = [
  'sessions',
  'session_duration_avg',
  'session_duration_median',
  'session_duration_p90',
  'bounce_rate',
  'events_per_session',
] as const;

export type EventMeasure = (typeof EVENT_MEASURES)[number];
export type FeedbackMeasure = (typeof FEEDBACK_MEASURES)[number];
export type AdminMeasure = (typeof ADMIN_MEASURES)[number];
export type SessionMeasure = (typeof SESSION_MEASURES)[number];
export type Measure = EventMeasure | FeedbackMeasure | AdminMeasure | ActiveUserMeasure | PropertyMeasure | SessionMeasure;

/**
 * The measures answered by default: none of the property math, which names a property, and none
 * that forms sessions, so the default stays on the rollups.
 */
export const KEY_SURFACE_MEASURES: readonly Measure[] = [...EVENT_MEASURES, ...FEEDBACK_MEASURES];
export const ADMIN_SURFACE_MEASURES: readonly Measure[] = [...EVENT_MEASURES, ...FEEDBACK_MEASURES, ...ADMIN_MEASURES];

export const isEventMeasure = (m: Measure): m is EventMeasure => (EVENT_MEASURES as readonly string[]).includes(m);
export const isFeedbackMeasure = (m: Measure): m is FeedbackMeasure => (FEEDBACK_MEASURES as readonly string[]).includes(m);
export const isAdminMeasure = (m: Measure): m is AdminMeasure => (ADMIN_MEASURES as readonly string[]).includes(m);
export const isSessionMeasure = (m: Measure): m is SessionMeasure => (SESSION_MEASURES as readonly string[]).includes(m);

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * Values of one measure set, by measure name; only the requested measures are present. null: no
 * value (events per user without users, a session ratio or duration without sessions, property
 * math over no numeric value).
 */
export type MeasureValues = { [K in Exclude<Measure, PropertyMeasure | 'events_per_user' | SessionRatio>]?: number | undefined } & {
  [K in 'events_per_user' | SessionRatio]?: number | null | undefined;
} & { [propertyMeasure: string]: number | null };
/** The session measures that are null without sessions (all but the count). */
type SessionRatio = Exclude<SessionMeasure, 'sessions'>;

// --- Event measures over raw events (issue 38: docs/metrics.md, "Measures") -------------------

/**
 * Active users and events per user, on both surfaces: dau, wau and mau are the distinct users with
 * an event in scope in the trailing 1, 7 and 30 days ending with a bucket's last day (date_to for
 * summary and breakdown); events_per_user is event_count / unique_event_users.
 */
export const ACTIVE_USER_MEASURES = ['dau', 'wau', 'mau', 'events_per_user'] as const;
export type ActiveUserMeasure = (typeof ACTIVE_USER_MEASURES)[number];
export const TRAILING_DAYS: Record<Exclude<ActiveUserMeasure, 'events_per_user'>, number> = { dau: 1, wau: 7, mau: 30 };

/** Property math: `<math>:<path>` over the numeric values of one property, both surfaces. */
export const PROPERTY_MATH = ['sum', 'avg', 'min', 'max', 'median', 'p90', 'p95', 'p99'] as const;
export type PropertyMath = (typeof PROPERTY_MATH)[number];
export type PropertyMeasure = `${PropertyMath}:${string}`;
/** The level of each quantile (exact, interpolated: quantileExactInclusive). */
export const QUANTILE_LEVEL: Partial<Record<PropertyMath, number>> = { median: 0.5, p90: 0.9, p95: 0.95, p99: 0.99 };

/** The measures of the event family that are read from raw events (never from the rollups). */
export const isActiveUserMeasure = (m: string): m is ActiveUserMeasure => (ACTIVE_USER_MEASURES as readonly string[]).includes(m);
export const isPropertyMeasure = (m: string): m is PropertyMeasure =>
  /^[a-z0-9]+:/.test(m) && (PROPERTY_MATH as readonly string[]).includes(m.slice(0, m.indexOf(':')));

/**
 * A property measure's math and property path: `sum:properties.amount`, or `sum:amount` for the
 * same (a bare key means `properties.<key>`). The path's keys are checked by the route's schema
 * (src/api/metrics/metrics.schema.ts) against the filter language's key pattern.
 */
export function propertyMeasureParts(measure: PropertyMeasure): { math: PropertyMath; keys: string[] } {
  const colon = measure.indexOf(':');
  const path = measure.slice(colon + 1);
  const keys = (path.startsWith('properties.') ? path.slice('properties.'.length) : path).split('.');
  return { math: measure.slice(0, colon) as PropertyMath, keys };
}

/** Every measure of the event family: split by event name and property like event_count. */
export const isRawEventMeasure = (m: string) => isActiveUserMeasure(m) || isPropertyMeasure(m);
