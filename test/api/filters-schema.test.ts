import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { checkFilterList, FilterListField, filtersQueryParam } from '../../src/api/shared/filters.schema.js';
import { describeIssue } from '../../src/api/validation.js';

/**
 * The request form of the filter language (src/api/shared/filters.schema.ts), as the metrics query
 * parameter and as the insights body field: a refusal names the filter by its position.
 */
describe('filter list validation', () => {
  const body = z.object({ filters: FilterListField.optional(), steps: z.array(z.object({ filters: FilterListField })).optional() });
  const refusal = (input: unknown) => {
    const result = body.safeParse(input);
    return result.success ? undefined : describeIssue(result.error, input);
  };

  it('names the position inside a body, a step of a body included', () => {
    expect(
      refusal({
        filters: [
          { property: 'properties.plan', op: 'eq', value: 'pro' },
          { property: 'x', op: 'eq', value: 1 },
        ],
      }),
    ).toMatch(/^filters\.1\.property: unknown property "x"/);
    expect(refusal({ steps: [{ filters: [] }, { filters: [{ property: 'user_id', op: 'gt', value: 'a' }] }] })).toBe(
      'steps.1.filters.0.value: gt takes a finite number',
    );
    expect(refusal({ filters: { property: 'user_id' } })).toBe('filters: must be a JSON list of filters');
    expect(body.parse({ filters: [{ any: [{ property: 'user.mrr', op: 'is_set' }] }] }).filters).toEqual([
      { any: [{ property: 'user.mrr', op: 'is_set' }] },
    ]);
  });

  it('reads the query parameter as URL-decoded JSON and names the position in the message', () => {
    const result = filtersQueryParam.safeParse(JSON.stringify([{ property: 'event_name', op: 'in', value: [] }]));
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(
      'filters.0.value: in takes a list of 1 to 100 values, each a string (at most 1000 characters), a finite number or a boolean',
    );
  });

  it('counts every filter inside groups against the limit of 20, and keeps groups to 2 deep', () => {
    const leaf = { property: 'user_id', op: 'eq', value: 'u' };
    expect('filters' in checkFilterList([{ any: Array(10).fill(leaf) }, { any: [{ any: Array(10).fill(leaf) }] }])).toBe(true);
    expect(checkFilterList([{ any: Array(10).fill(leaf) }, { any: [{ any: Array(11).fill(leaf) }] }])).toEqual({
      issue: { path: [], message: 'at most 20 filters in all (groups included)' },
    });
    expect(checkFilterList([{ any: [{ any: [{ any: [leaf] }] }] }])).toEqual({
      issue: { path: [0, 'any', 0, 'any', 0, 'any'], message: 'groups nest at most 2 deep' },
    });
    expect(checkFilterList([{ ...leaf, extra: 1 }])).toEqual({
      issue: { path: [0, 'extra'], message: 'unknown field; a filter has property, op and value' },
    });
  });
});
