/**
 * The metadata of an object whose values may be any JSON value (event properties, result rows):
 * `.meta(anyValues)` on its `z.record(z.string(), z.unknown())`. The generator describes a value
 * that accepts null as `{ nullable: true }`, which OpenAPI 3.0 ignores without a `type` and which
 * linters and code generators refuse; `{}` is any value, null included.
 */
export const anyValues = { additionalProperties: {} };
