/**
 * The vocabulary of the one filter language of the metrics and insights (docs/metrics.md,
 * "Filters"). A list means all of its nodes; `{ any: [...] }` means at least one. The route
 * validates a request's list into these types; src/olap/filter-sql.ts compiles them into a
 * condition over event rows. Kept apart from the compiler so that every olap concern (metrics,
 * insights, sessions) and the API's validation share the names without sharing the SQL.
 */
export const FILTER_OPS = [
  'eq',
  'neq',
  'in',
  'not_in',
  'contains',
  'not_contains',
  'starts_with',
  'regex',
  'gt',
  'gte',
  'lt',
  'lte',
  'between',
  'is_set',
  'is_not_set',
] as const;
export type FilterOp = (typeof FILTER_OPS)[number];

/** One comparison. `property` is `properties.<key>[.<key>…]`, `event_name`, `user_id` or `user.mrr`. */
export type PropertyFilter = { property: string; op: FilterOp; value?: unknown };
/** At least one of its nodes holds. Groups nest at most 2 deep. */
export type AnyGroup = { any: FilterNode[] };
export type FilterNode = PropertyFilter | AnyGroup;
/** All of its nodes hold; an empty list holds for every row. */
export type FilterList = FilterNode[];

/** The most filters (leaves) one request may hold. */
export const MAX_FILTERS = 20;
/** The deepest nesting of `any` groups. */
export const MAX_GROUP_DEPTH = 2;

/**
 * A boolean SQL expression over one event row with the bound parameters it names. The text is
 * built from fixed fragments and validated identifiers only; every request value is in `params`.
 * It may also read `{projectId:UUID}`, which every metrics and insights query binds.
 */
export type SqlCondition = { sql: string; params: Record<string, unknown> };
