import { describe, expect, it } from 'vitest';
import { describeFilter, kindOf, OPS_BY_KIND, parseFilterValue, readFilters, withFilters } from '../../web/src/lib/filters.js';
import { timeAxisLabels } from '../../web/src/lib/format.js';

/*
 * The dashboard's side of the filter language and dates (web/src/lib): what the filter bar sends
 * for what the owner typed, what it reads back from a shared URL, and how chart axes write dates.
 */
describe('the filter bar’s values', () => {
  it('offers the ops that fit the property’s JSON types', () => {
    expect(kindOf(['Int64'])).toBe('number');
    expect(kindOf(['Float64', 'Int64'])).toBe('number');
    expect(kindOf(['Bool'])).toBe('boolean');
    expect(kindOf(['String', 'Int64'])).toBe('string');
    expect(OPS_BY_KIND.number).toContain('between');
    expect(OPS_BY_KIND.number).not.toContain('contains');
    expect(OPS_BY_KIND.string).toContain('regex');
    expect(OPS_BY_KIND.string).not.toContain('gte');
    expect(OPS_BY_KIND.boolean).toEqual(['eq', 'neq', 'is_set', 'is_not_set']);
  });

  it('sends numbers as JSON numbers, lists split on commas, both ends of between, true and false', () => {
    expect(parseFilterValue('gte', 'number', ' 300 ')).toEqual({ value: 300 });
    expect(parseFilterValue('eq', 'number', 'many')).toBeNull();
    expect(parseFilterValue('between', 'number', '1, 2.5')).toEqual({ value: [1, 2.5] });
    expect(parseFilterValue('between', 'number', '1')).toBeNull();
    expect(parseFilterValue('in', 'string', 'pro, team')).toEqual({ value: ['pro', 'team'] });
    expect(parseFilterValue('in', 'string', 'pro,')).toBeNull();
    expect(parseFilterValue('eq', 'boolean', 'true')).toEqual({ value: true });
    expect(parseFilterValue('eq', 'boolean', 'yes')).toBeNull();
    expect(parseFilterValue('eq', 'string', ' ios ')).toEqual({ value: 'ios' });
    expect(parseFilterValue('is_set', 'string', 'ignored')).toEqual({});
  });

  it('reads a shared URL’s list, groups included, and drops what is not a list of filters', () => {
    const list = [{ property: 'properties.plan', op: 'eq', value: 'pro' }, { any: [{ property: 'user_id', op: 'is_set' }] }];
    expect(readFilters(JSON.stringify(list))).toEqual(list);
    expect(readFilters('{"property":"x"}')).toEqual([]);
    expect(readFilters('[{"property":"x","op":"almost"}]')).toEqual([]);
    expect(readFilters('not json')).toEqual([]);
    expect(describeFilter(list[1] as never)).toBe('any of (User id is set)');
    expect(describeFilter({ property: 'properties.n', op: 'between', value: [1, 5] })).toBe('n is between 1 and 5');
    const params = withFilters(new URLSearchParams('from=2026-11-01'), [{ property: 'event_name', op: 'eq', value: 'a' }]);
    expect(params.get('from')).toBe('2026-11-01');
    expect(JSON.parse(params.get('filters') ?? '')).toEqual([{ property: 'event_name', op: 'eq', value: 'a' }]);
    expect(withFilters(params, []).has('filters')).toBe(false);
  });
});

describe('dates on chart axes', () => {
  const seconds = (iso: string) => Date.parse(iso) / 1000;
  it('writes days as "2 Nov", the year on the first tick and where it changes', () => {
    const ticks = ['2026-12-30', '2026-12-31', '2027-01-01'].map((d) => seconds(`${d}T00:00:00Z`));
    expect(timeAxisLabels(ticks, 86_400)).toEqual(['30 Dec 2026', '31 Dec', '1 Jan 2027']);
  });
  it('writes hours in 24-hour UTC, the day where it changes; months as "Nov 2026"', () => {
    const ticks = ['2026-11-02T18:00:00Z', '2026-11-02T19:55:00Z', '2026-11-03T00:00:00Z'].map(seconds);
    expect(timeAxisLabels(ticks, 3600)).toEqual(['2 Nov 18:00', '19:55', '3 Nov 00:00']);
    expect(timeAxisLabels([seconds('2026-11-01T00:00:00Z')], 30 * 86_400)).toEqual(['Nov 2026']);
  });
});
