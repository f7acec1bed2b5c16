/** Predefined event names, readable on every tier (SPEC 6). */
export const PREDEFINED_EVENTS = ['feedback_list', 'feedback_detail', 'submit_feedback'] as const;
export const isPredefinedEvent = (name: string) => (PREDEFINED_EVENTS as readonly string[]).includes(name);

export const EVENT_MEASURES = ['event_count', 'unique_event_users'] as const;
export const FEEDBACK_MEASURES = ['feedback_count', 'vote_count', 'comment_count'] as const;
/** SDK-user and revenue measures: admin-token surface only. */
export const ADMIN_MEASURES = ['sdk_users', 'new_sdk_users', 'active_sdk_users', 'paying_users', 'total_mrr', 'voter_mrr'] as const;

export type EventMeasure = (typeof EVENT_MEASURES)[number];
export type FeedbackMeasure = (typeof FEEDBACK_MEASURES)[number];
export type AdminMeasure = (typeof ADMIN_MEASURES)[number];
export type Measure = EventMeasure | FeedbackMeasure | AdminMeasure;

export const KEY_SURFACE_MEASURES: readonly Measure[] = [...EVENT_MEASURES, ...FEEDBACK_MEASURES];
export const ADMIN_SURFACE_MEASURES: readonly Measure[] = [...EVENT_MEASURES, ...FEEDBACK_MEASURES, ...ADMIN_MEASURES];

export const isEventMeasure = (m: Measure): m is EventMeasure => (EVENT_MEASURES as readonly string[]).includes(m);
export const isFeedbackMeasure = (m: Measure): m is FeedbackMeasure => (FEEDBACK_MEASURES as readonly string[]).includes(m);
export const isAdminMeasure = (m: Measure): m is AdminMeasure => (ADMIN_MEASURES as readonly string[]).includes(m);

export const INTERVALS = ['hour', 'day', 'week', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/** Values of one measure set, by measure name; only the requested measures are present. */
export type MeasureValues = Partial<Record<Measure, number>>;
