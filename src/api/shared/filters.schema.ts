import { z } from 'zod';
import { MAX_REGEX_LENGTH, parseFilterTarget } from '../../olap/filter-sql.js';
import { FILTER_OPS, type FilterList, type FilterNode, type FilterOp, MAX_FILTERS, MAX_GROUP_DEPTH } from '../../olap/filter-types.js';
import { describe } from './building-blocks.js';

/*
 * The request form of the filter language (docs/metrics.md, "Filters"), shared by the metrics
 * routes (the query parameter `filters`, URL-encoded JSON) and the insights bodies (the field
 * `filters`). The checks are written out by hand rather than as a zod union, so that a refusal
 * names the filter by its position and says what is wrong with it (`filters.2.op: unknown op
 * "eqq"; …`), where a union would only say "Invalid input". What depends on the plan (a custom
 * event name below Pro) or on the engine (a regex that does not compile) is checked by the planner.
 */

/** The longest string value a filter may compare with. */
export const MAX_FILTER_TEXT = 1000;
/** The most values of one `in` / `not_in` list. */
export const MAX_IN_VALUES = 100;

type Issue = { path: (string | number)[]; message: string };

const PROPERTY_FORMS =
  'properties.<key>[.<key>…] (keys of letters, digits, _$@-, inner spaces and colons), event_name, user_id or user.mrr';
const SCALAR = `a string (at most ${MAX_FILTER_TEXT} characters), a finite number or a boolean`;

const isScalar = (v: unknown) =>
  (typeof v === 'string' && v.length <= MAX_FILTER_TEXT) || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** What is wrong with a leaf's value for its op, or undefined when it fits. */
function valueProblem(op: FilterOp, hasValue: boolean, value: unknown): string | undefined {
  switch (op) {
    case 'is_set':
    case 'is_not_set':
      return hasValue ? `${op} takes no value` : undefined;
    case 'eq':
    case 'neq':
      return isScalar(value) ? undefined : `${op} takes ${SCALAR}`;
    case 'in':
    case 'not_in':
      return Array.isArray(value) && value.length >= 1 && value.length <= MAX_IN_VALUES && value.every(isScalar)
        ? undefined
        : `${op} takes a list of 1 to ${MAX_IN_VALUES} values, each ${SCALAR}`;
    case 'contains':
    case 'not_contains':
    case 'starts_with':
      return typeof value === 'string' && value.length <= MAX_FILTER_TEXT
        ? undefined
        : `${op} takes a string of at most ${MAX_FILTER_TEXT} characters`;
    case 'regex':
      return typeof value === 'string' && value.length <= MAX_REGEX_LENGTH
        ? undefined
        : `regex takes a pattern (re2 syntax) of at most ${MAX_REGEX_LENGTH} characters`;
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return isNumber(value) ? undefined : `${op} takes a finite number`;
    case 'between':
      return Array.isArray(value) && value.length === 2 && isNumber(value[0]) && isNumber(value[1]) && value[0] <= value[1]
        ? undefined
        : 'between takes [low, high], two finite numbers with low <= high';
  }
}

/**
 * The filter list of a request, or the first problem, with its path relative to the list
 * (`[2, 'op']`). A list means all of its nodes; `{ any }` at least one; groups nest at most
 * MAX_GROUP_DEPTH deep; at most MAX_FILTERS leaves in all.
 */
export function checkFilterList(input: unknown): { filters: FilterList } | { issue: Issue } {
  if (!Array.isArray(input)) return { issue: { path: [], message: 'must be a JSON list of filters' } };
  let leaves = 0;
  const walk = (list: unknown[], path: (string | number)[], depth: number): FilterNode[] | Issue => {
    const out: FilterNode[] = [];
    for (const [index, item] of list.entries()) {
      const at = [...path, index];
      if (!isObject(item)) return { path: at, message: 'must be an object: { property, op, value } or { any: [...] }' };
      if ('any' in item) {
        const extra = Object.keys(item).find((key) => key !== 'any');
        if (extra !== undefined) return { path: [...at, extra], message: 'a group holds only "any"' };
        if (depth >= MAX_GROUP_DEPTH) return { path: [...at, 'any'], message: `groups nest at most ${MAX_GROUP_DEPTH} deep` };
        if (!Array.isArray(item.any) || item.any.length === 0)
          return { path: [...at, 'any'], message: 'must be a non-empty list of filters' };
        const inner = walk(item.any, [...at, 'any'], depth + 1);
        if (!Array.isArray(inner)) return inner;
        out.push({ any: inner });
        continue;
      }
      const extra = Object.keys(item).find((key) => key !== 'property' && key !== 'op' && key !== 'value');
      if (extra !== undefined) return { path: [...at, extra], message: 'unknown field; a filter has property, op and value' };
      if (typeof item.property !== 'string' || !parseFilterTarget(item.property)) {
        const given = typeof item.property === 'string' ? `unknown property "${item.property.slice(0, 120)}"; ` : '';
        return { path: [...at, 'property'], message: `${given}must be ${PROPERTY_FORMS}` };
      }
      if (typeof item.op !== 'string' || !(FILTER_OPS as readonly string[]).includes(item.op)) {
        const given = typeof item.op === 'string' ? `unknown op "${item.op.slice(0, 40)}"; ` : '';
        return { path: [...at, 'op'], message: `${given}must be one of ${FILTER_OPS.join(', ')}` };
      }
      const op = item.op as FilterOp;
      const problem = valueProblem(op, 'value' in item && item.value !== undefined, item.value);
      if (problem) return { path: [...at, 'value'], message: problem };
      leaves += 1;
      if (leaves > MAX_FILTERS) return { path: [], message: `at most ${MAX_FILTERS} filters in all (groups included)` };
      out.push(
        op === 'is_set' || op === 'is_not_set' ? { property: item.property, op } : { property: item.property, op, value: item.value },
      );
    }
    return out;
  };
  const result = walk(input, [], 0);
  return Array.isArray(result) ? { filters: result } : { issue: result };
}

const FilterScalar = z.union([z.string(), z.number(), z.boolean()]);

/** The shape the document shows (the checks above are what validates). */
const FilterLeafShape = z
  .object({
    property: z.string().meta({ description: `What is compared: ${PROPERTY_FORMS}.`, example: 'properties.plan' }),
    op: z.enum(FILTER_OPS),
    // The JSON values a filter compares with: `z.unknown()` would be documented as a bare
    // `nullable`, which OpenAPI 3.0 refuses without a type (the insights bodies do the same).
    value: z
      .union([FilterScalar, z.array(FilterScalar)])
      .optional()
      .meta({
        description:
          'A string, number or boolean (eq, neq); a list of them (in, not_in); a string (contains, not_contains, starts_with, regex: re2, at most 1,000 characters); a number (gt, gte, lt, lte); [low, high] (between, both included); none (is_set, is_not_set).',
      }),
  })
  .meta({ id: 'PropertyFilter', description: 'One comparison (docs/metrics.md, "Filters").' });
const InnerGroupShape = z.object({ any: z.array(FilterLeafShape).min(1) });
const FilterNodeShape = z
  .union([FilterLeafShape, z.object({ any: z.array(z.union([FilterLeafShape, InnerGroupShape])).min(1) })])
  .meta({ id: 'FilterNode', description: 'A filter, or `{ any: [...] }`: at least one of its filters holds. Groups nest at most 2 deep.' });

/**
 * The body field `filters` (insights): a refusal's zod path is the filter's position, so the body's
 * message reads `filters.2.op: …` (and `steps.1.filters.0.value: …` inside a step).
 */
export const FilterListField = z
  .preprocess((input, ctx) => {
    const checked = checkFilterList(input);
    if ('filters' in checked) return checked.filters;
    ctx.issues.push({ code: 'custom', path: checked.issue.path, message: checked.issue.message, input });
    return z.NEVER;
  }, z.array(FilterNodeShape).max(MAX_FILTERS))
  .meta({
    description: `All of these hold (docs/metrics.md, "Filters"). At most ${MAX_FILTERS} filters in all.`,
  }) as unknown as z.ZodType<FilterList>;

/**
 * The metrics query parameter `filters`: the URL-encoded JSON list. The refusal's message names the
 * position itself (`filters.2.op: …`), as the metrics routes answer a parameter's message as it is.
 */
export const filtersQueryParam = describe(
  z
    .string()
    .transform((text, ctx) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        ctx.issues.push({ code: 'custom', input: text, message: 'filters: must be a URL-encoded JSON list of filters' });
        return z.NEVER;
      }
      const checked = checkFilterList(parsed);
      if ('filters' in checked) return checked.filters;
      const position = ['filters', ...checked.issue.path].join('.');
      ctx.issues.push({ code: 'custom', input: text, message: `${position}: ${checked.issue.message}` });
      return z.NEVER;
    })
    .optional()
    .meta({ example: '[{"property":"properties.plan","op":"eq","value":"pro"}]' }),
  `URL-encoded JSON list of filters; all of them hold (docs/metrics.md, "Filters"). A filter is \`{ "property", "op", "value" }\` or \`{ "any": [...] }\` (at least one holds; groups nest at most ${MAX_GROUP_DEPTH} deep); at most ${MAX_FILTERS} filters. \`property\`: ${PROPERTY_FORMS}. \`op\`: ${FILTER_OPS.join(', ')}. A bad list is a 400 \`METRICS_INVALID_PARAMETER\` naming the filter (\`filters.2.op: …\`); below Pro, an \`event_name\` filter naming a custom event is a 402. With filters, the event measures are taken over the matching events.`,
);
