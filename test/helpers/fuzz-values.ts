import fc from 'fast-check';
import type { OpenAPIV3 } from 'openapi-types';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { FILTER_OPS } from '../../src/olap/filter-types.js';

/*
 * The value generators of the fuzz test (test/api/fuzz.test.ts): JSON bodies built from the OpenAPI
 * document's schemas, values the schema allows mixed with hostile ones. Shared with the test that
 * holds the ingestion routes' compiled check to zod (test/api/event-check.test.ts).
 */

export type Schema = OpenAPIV3.SchemaObject;

/** A body sent as these bytes, not JSON-encoded (broken JSON). */
export class RawBody {
  constructor(readonly text: string) {}
}

export const document = buildOpenApiDocument() as unknown as OpenAPIV3.Document;

export function resolve<T>(value: T | OpenAPIV3.ReferenceObject): T {
  if (value && typeof value === 'object' && '$ref' in value) {
    const name = value.$ref.replace('#/components/schemas/', '');
    return document.components?.schemas?.[name] as T;
  }
  return value as T;
}

// ---------------------------------------------------------------------------------------------
// Values

/** Hostile strings other than lone surrogates and NUL (those have their own property). */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }).map((s) => s.replaceAll('\u0000', '')),
  fc.oneof(fc.integer(), fc.double(), fc.bigInt()).map(String),
  fc.constantFrom(
    '',
    ' ',
    'null',
    'true',
    '[]',
    '{}',
    '1e999',
    '-0',
    '0x10',
    'NaN',
    'Infinity',
    ' 1 ',
    "' or '1'='1",
    '"; drop table feedbacks; --',
    '{id:UUID}',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a template placeholder sent as text, on purpose
    '${x}',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    '__proto__',
    'constructor',
    '%00',
    '\\u0000',
    '\u202e\ufeff\u200b',
    'Ａｂｃ',
    'é'.repeat(3000),
    '😀'.repeat(2000),
    'a'.repeat(10_001),
  ),
);

/** The characters the other branch of the hardening refuses with 400 (lone surrogates, NUL). */
export const surrogateOrNul: fc.Arbitrary<string> = fc.constantFrom(
  '\ud800',
  'a\udfffb',
  '\udbff\udbff',
  '\u0000',
  'x\u0000y',
  '\u0000\ud800',
);

export const deepNesting = (depth: number): unknown => (depth === 0 ? 'bottom' : { a: [deepNesting(depth - 1)] });

/** Any JSON value that is not what a field wants: wrong types, nesting, extremes. */
export const hostileValue = (strings: fc.Arbitrary<string>): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 4, arbitrary: strings },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.constantFrom(1e308, -1e308, 2 ** 53 + 1, -0, 0.1, -1, 1e-300),
    fc.array(strings, { maxLength: 3 }),
    fc.dictionary(strings, strings, { maxKeys: 3 }),
    fc.jsonValue({ maxDepth: 3 }),
    fc.constant(deepNesting(200)),
  );

export const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const MAX_GENERATED = 20;

/** Values the schema allows (or nearly: lengths at the edges), ids of real resources where a UUID goes. */
export function plausible(schema: Schema, ids: string[]): fc.Arbitrary<unknown> {
  const base = plausibleNotNull(schema, ids);
  return schema.nullable ? fc.option(base, { nil: null, freq: 5 }) : base;
}

export function plausibleNotNull(schema: Schema, ids: string[]): fc.Arbitrary<unknown> {
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string':
      switch (schema.format) {
        case 'uuid':
          return fc.oneof(fc.constantFrom(...ids), fc.uuid());
        case 'email':
          return fc.emailAddress();
        case 'date-time':
          return fc
            .date({ min: new Date(Date.now() - 3 * 365 * 86_400_000), max: new Date(Date.now() + 86_400_000), noInvalidDate: true })
            .map((d) => d.toISOString());
        case 'date':
          return fc
            .date({ min: new Date('1990-01-01'), max: new Date('2120-01-01'), noInvalidDate: true })
            .map((d) => d.toISOString().slice(0, 10));
        case 'uri':
          return fc.oneof(
            fc.webUrl(),
            fc.constantFrom('http://127.0.0.1:9/hook', 'https://hooks.slack.com/services/x', 'ftp://example.com', 'example.com'),
          );
        default:
          if (schema.pattern) return fc.stringMatching(new RegExp(schema.pattern));
          return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? MAX_GENERATED, MAX_GENERATED) });
      }
    case 'integer':
      return fc.integer({ min: schema.minimum ?? -10, max: schema.maximum ?? 10_000 });
    case 'number':
      return fc.double({ min: schema.minimum ?? -10, max: schema.maximum ?? 10_000, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = resolve<Schema>(schema.items);
      return fc.array(plausible(items, ids), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 5, 5) });
    }
    case 'object':
      if (schema.properties) {
        const fields = Object.fromEntries(
          Object.entries(schema.properties).map(([name, field]) => [name, plausible(resolve<Schema>(field), ids)]),
        );
        return fc.record(fields, { requiredKeys: schema.required ?? [] });
      }
      return fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A field's value: mostly one the schema allows, else a hostile one. */
export const fieldValue = (schema: Schema, ids: string[], strings: fc.Arbitrary<string>, hostileWeight: number) =>
  fc.oneof({ weight: 3, arbitrary: plausible(schema, ids) }, { weight: hostileWeight, arbitrary: hostileValue(strings) });

/**
 * A JSON body for an object schema: each field absent, plausible or hostile, in camelCase or
 * snake_case, with unknown keys now and then; sometimes not an object, sometimes not JSON.
 */
export function bodyOf(schema: Schema, ids: string[], strings: fc.Arbitrary<string>, hostileWeight: number): fc.Arbitrary<unknown> {
  const fields = Object.entries(schema.properties ?? {}).map(([name, field]) =>
    fc
      .record({
        present: fc.nat(9).map((n) => n < 8),
        snake: fc.boolean(),
        value: fieldValue(resolve<Schema>(field), ids, strings, hostileWeight),
      })
      .map((f) => ({ name: f.snake ? camelToSnake(name) : name, ...f })),
  );
  const object = fc
    .tuple(fc.tuple(...fields), fc.dictionary(strings, hostileValue(strings), { maxKeys: 2 }), fc.nat(9))
    .map(([parts, extra, roll]) => {
      const body: Record<string, unknown> = roll === 0 ? { ...extra } : {};
      for (const part of parts) if (part.present) body[part.name] = part.value;
      return body;
    });
  return fc.oneof(
    { weight: 12, arbitrary: object },
    { weight: 1, arbitrary: hostileValue(strings) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('{', '{"a":}', '[1,2', 'nul', '{"title":"x",}', '\u0000', '', '{"__proto__":{"x":1}}')
        .map((raw) => new RawBody(raw)),
    },
  );
}

// ---------------------------------------------------------------------------------------------
// The filter language (docs/metrics.md, "Filters"): hostile paths, ops, values and regexes

/** Every op of the language, and names it does not know (a wrong case, SQL's, none). */
const FILTER_OPS_SENT = [...FILTER_OPS, 'EQ', 'like', ''];

/** Property paths a filter or a property measure may send: valid ones, and ones that try to reach SQL. */
export const hostilePropertyPath: fc.Arbitrary<string> = fc.constantFrom(
  'properties.plan',
  'properties.a.b',
  'event_name',
  'user_id',
  'user.mrr',
  'properties.`x`',
  'properties.a`) OR 1=1 --',
  "properties.a'b",
  'properties.a"b',
  'properties.a\\b',
  'properties.',
  'properties..a',
  'properties.:String',
  'properties.a.:Int64',
  'properties.^a',
  'properties.{projectId:UUID}',
  `properties.${'a.'.repeat(50)}a`,
  `properties.${'x'.repeat(101)}`,
  'properties.a b',
  'properties. a',
  'properties.a\u0000b',
  'PROPERTIES.plan',
  'user.mrr.x',
  'event_name ',
  'properties',
  '__proto__',
);

/** Regex patterns: ones re2 refuses, ones that are costly elsewhere, and the 1,000-character edge. */
export const hostileRegex: fc.Arbitrary<string> = fc.constantFrom(
  '(',
  '[',
  '(?=a)',
  '(?<!a)b',
  '\\1',
  '(a*)*b',
  'a{1000}{1000}',
  'a{1001}',
  '\\',
  '.*'.repeat(300),
  '\\p{Greek}+',
  '(?P<n>a)',
  '(?i)PRO',
  'x'.repeat(1000),
  'x'.repeat(1001),
  "'; SELECT 1 --",
  '',
);

const filterValue = fc.oneof(
  hostileValue(fc.constantFrom('pro', '', "'", '\\', '%_', '1e999')),
  fc.constantFrom(
    1e308,
    -1e308,
    -0,
    [1, 0],
    [0, 1],
    ['a', 1, true],
    Array.from({ length: 101 }, (_, i) => i),
  ),
  hostileRegex,
);

const filterLeaf = fc.record(
  { property: hostilePropertyPath, op: fc.constantFrom(...FILTER_OPS_SENT), value: filterValue, extra: fc.constant(1) },
  { requiredKeys: ['property', 'op'] },
);

/** A `filters` list as sent: valid-looking and hostile nodes, deep groups, too many filters, not a list. */
export const hostileFilterText: fc.Arbitrary<string> = fc.oneof(
  fc
    .array(fc.oneof(filterLeaf, fc.record({ any: fc.array(filterLeaf, { maxLength: 3 }) })), { maxLength: 4 })
    .map((list) => JSON.stringify(list)),
  fc
    .record({ property: fc.constant('properties.plan'), op: fc.constant('regex'), value: hostileRegex })
    .map((leaf) => JSON.stringify([leaf])),
  fc.constantFrom(
    '[]',
    '{}',
    'null',
    '[[]]',
    '[null]',
    '[{"any":[]}]',
    '[{"any":"x"}]',
    JSON.stringify([{ any: [{ any: [{ any: [{ property: 'user_id', op: 'eq', value: 'x' }] }] }] }]),
    JSON.stringify(Array.from({ length: 21 }, () => ({ property: 'user_id', op: 'eq', value: 'x' }))),
    JSON.stringify([deepNesting(50)]),
    '[{"property":"properties.plan","op":"eq","value":"pro"}',
    '[{"__proto__":{"op":"eq"},"property":"properties.plan"}]',
  ),
);

/** Property measures as sent: the math names with hostile paths. */
export const hostileMeasureText: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom('sum', 'avg', 'p95', 'median', 'p100', 'SUM', ''), hostilePropertyPath)
  .map(([math, path]) => `${math}:${path}`);
