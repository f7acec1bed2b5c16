/**
 * The filter language of the metrics and insights (docs/metrics.md, "Filters") as the dashboard's
 * filter bar writes it: a list of `{ property, op, value }` that all hold. The bar writes no
 * `any` groups (the API takes them; the bar keeps to one list, which is what owners combine
 * most), but a list read from a shared URL keeps the groups it holds and sends them on.
 */
export type FilterOp =
  | 'eq'
  | 'neq'
  | 'in'
  | 'not_in'
  | 'contains'
  | 'not_contains'
  | 'starts_with'
  | 'regex'
  | 'gt'
  | 'gte'
  | 'lt'
  | 'lte'
  | 'between'
  | 'is_set'
  | 'is_not_set';
export type PropertyFilter = { property: string; op: FilterOp; value?: unknown };
export type FilterNode = PropertyFilter | { any: FilterNode[] };

/** The kind of value a property holds, from the JSON types the API saw (event-properties). */
export type ValueKind = 'string' | 'number' | 'boolean';

export const OP_LABELS: Record<FilterOp, string> = {
  eq: 'is',
  neq: 'is not',
  in: 'is one of',
  not_in: 'is none of',
  contains: 'contains',
  not_contains: 'does not contain',
  starts_with: 'starts with',
  regex: 'matches the pattern',
  gt: 'is more than',
  gte: 'is at least',
  lt: 'is less than',
  lte: 'is at most',
  between: 'is between',
  is_set: 'is set',
  is_not_set: 'is not set',
};

const PRESENCE: FilterOp[] = ['is_set', 'is_not_set'];
/** The ops that fit each kind of value: numeric comparisons only for numbers, text ones for strings. */
export const OPS_BY_KIND: Record<ValueKind, FilterOp[]> = {
  string: ['eq', 'neq', 'in', 'not_in', 'contains', 'not_contains', 'starts_with', 'regex', ...PRESENCE],
  number: ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'between', 'in', 'not_in', ...PRESENCE],
  boolean: ['eq', 'neq', ...PRESENCE],
};

/** ClickHouse's JSON type names (the event-properties answer) to the kind of value they hold. */
export function kindOf(types: readonly string[]): ValueKind {
  if (types.length > 0 && types.every((type) => /^(U?Int|Float|Decimal)/.test(type))) return 'number';
  if (types.length > 0 && types.every((type) => type === 'Bool')) return 'boolean';
  return 'string';
}

/** The properties every event has, besides those it carries. */
export const BUILT_IN_PROPERTIES: { property: string; label: string; kind: ValueKind }[] = [
  { property: 'event_name', label: 'Event name', kind: 'string' },
  { property: 'user_id', label: 'User id', kind: 'string' },
  { property: 'user.mrr', label: "User's MRR", kind: 'number' },
];

export const needsNoValue = (op: FilterOp) => op === 'is_set' || op === 'is_not_set';
const isList = (op: FilterOp) => op === 'in' || op === 'not_in';

/**
 * A typed value text as the API takes it for `op` on a `kind` property: a number for the numeric
 * kinds (a JSON number, so `eq 5` matches 5), true/false, a list split on commas for `in`, the
 * two ends for `between`. Null when the text is not such a value (the form says why).
 */
export function parseFilterValue(op: FilterOp, kind: ValueKind, text: string): { value?: unknown } | null {
  if (needsNoValue(op)) return {};
  const numeric = kind === 'number' || ['gt', 'gte', 'lt', 'lte', 'between'].includes(op);
  const one = (part: string): unknown => {
    const trimmed = part.trim();
    if (trimmed === '') return undefined;
    if (numeric) {
      const number = Number(trimmed);
      return Number.isFinite(number) ? number : undefined;
    }
    if (kind === 'boolean') return trimmed === 'true' ? true : trimmed === 'false' ? false : undefined;
    return trimmed;
  };
  if (op === 'between') {
    const parts = text.split(',').map(one);
    return parts.length === 2 && parts.every((part) => typeof part === 'number') ? { value: parts } : null;
  }
  if (isList(op)) {
    const parts = text.split(',').map(one);
    return parts.length > 0 && parts.every((part) => part !== undefined) ? { value: parts } : null;
  }
  const value = one(text);
  return value === undefined ? null : { value };
}

/** What a value reads as in the bar: lists joined by commas, strings quoted. */
export function describeValue(value: unknown): string {
  if (Array.isArray(value)) return value.map(describeValue).join(', ');
  if (typeof value === 'string') return `"${value}"`;
  return String(value);
}

/** A property as the bar names it: `plan` for `properties.plan`, the built-ins by their label. */
export function propertyLabel(property: string): string {
  const builtIn = BUILT_IN_PROPERTIES.find((p) => p.property === property);
  if (builtIn) return builtIn.label;
  return property.startsWith('properties.') ? property.slice('properties.'.length) : property;
}

export function describeFilter(node: FilterNode): string {
  if ('any' in node) return `any of (${node.any.map(describeFilter).join('; ')})`;
  const value = needsNoValue(node.op) ? '' : ` ${describeValue(node.value)}`;
  return `${propertyLabel(node.property)} ${OP_LABELS[node.op]}${node.op === 'between' ? ` ${describeValue(node.value).replace(', ', ' and ')}` : value}`;
}

/**
 * The `filters` query parameter of a page's URL (the API's own form: a JSON list), or an empty
 * list when it is absent or not a list of filters. The API checks the rest and names what it
 * refuses.
 */
export function readFilters(text: string | null | undefined): FilterNode[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) && parsed.every(isNode) ? parsed : [];
  } catch {
    return [];
  }
}

function isNode(node: unknown): node is FilterNode {
  if (typeof node !== 'object' || node === null) return false;
  if ('any' in node) return Array.isArray((node as { any: unknown }).any) && (node as { any: unknown[] }).any.every(isNode);
  const { property, op } = node as { property?: unknown; op?: unknown };
  return typeof property === 'string' && typeof op === 'string' && op in OP_LABELS;
}

/** The list as the `filters` query parameter, or undefined for none (the parameter left out). */
export const writeFilters = (filters: readonly FilterNode[]) => (filters.length > 0 ? JSON.stringify(filters) : undefined);

/** `params` with its `filters` set to `filters` (removed for none), the other inputs kept. */
export function withFilters(params: URLSearchParams, filters: readonly FilterNode[]): URLSearchParams {
  const next = new URLSearchParams(params);
  const text = writeFilters(filters);
  if (text) next.set('filters', text);
  else next.delete('filters');
  return next;
}
