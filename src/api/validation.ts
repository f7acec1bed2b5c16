import { z } from 'zod';
import { badRequest, notFound } from './errors.js';

const snakeToCamel = (key: string) => key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Request bodies accept camelCase and snake_case (SPEC 1, rule 2): `user_id` is read as `userId`.
 * Only the object's own keys are renamed; free-form values such as event properties stay as sent.
 * When both spellings are present the camelCase one wins.
 */
export function camelKeys(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  // Most bodies are camelCase already: then the object is its own answer (the schema after this
  // builds a new object anyway), without a copy on every request.
  if (!hasSnakeKey(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const camel = snakeToCamel(key);
    if (camel !== key && Object.hasOwn(value, camel)) continue;
    out[camel] = v;
  }
  return out;
}

function hasSnakeKey(value: object): boolean {
  for (const key in value) if (Object.hasOwn(value, key) && key.includes('_')) return true;
  return false;
}

/**
 * Other names of a body's fields, `{ alias: field }` in camelCase: the names some clients in the
 * wild send (the origin project's Kotlin SDK sends `email` for `userEmail`, `externalId` for
 * `userId`: docs/clients.md). The documented name stays primary.
 */
export type FieldAliases = Readonly<Record<string, string>>;

/**
 * Renames aliased fields to their documented names. An alias given as null or not at all is
 * absent; given beside its field with another value, it is a refusal naming both, never a guess.
 */
function applyAliases(value: unknown, aliases: FieldAliases): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  let out: Record<string, unknown> | undefined;
  for (const [alias, field] of Object.entries(aliases)) {
    if (!Object.hasOwn(value, alias)) continue;
    out ??= { ...(value as Record<string, unknown>) };
    const given = out[alias];
    delete out[alias];
    if (given === null || given === undefined) continue;
    const documented = out[field];
    if (documented === null || documented === undefined) out[field] = given;
    else if (JSON.stringify(documented) !== JSON.stringify(given)) {
      throw badRequest(`${field}: must be given once: ${field} and ${alias} disagree`);
    }
  }
  return out ?? value;
}

/**
 * A request body schema: an object whose keys may arrive in either casing, and under the
 * `aliases` given. `refuse`, when given, sees the body (camelCase keys) before its fields are
 * validated and throws the 400 of a field the body must not have.
 */
export function bodySchema<Shape extends z.ZodRawShape>(shape: Shape, aliases?: FieldAliases, refuse?: (body: unknown) => void) {
  const named = aliases ? (value: unknown) => applyAliases(camelKeys(value), aliases) : camelKeys;
  const prepare = refuse
    ? (value: unknown) => {
        const body = named(value);
        refuse(body);
        return body;
      }
    : named;
  return z.preprocess(prepare, z.object(shape));
}

/** Turns the first zod issue into a reason that names the field, e.g. `title: is required`. */
export function describeIssue(error: z.ZodError, input: unknown): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  const field = issue.path.map(String).join('.');
  const missing = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined;
  const message = missing ? 'is required' : issue.message;
  return field ? `${field}: ${message}` : message;
}

function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let current: unknown = camelKeys(input);
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

/** Validates a JSON body; a failure is a 400 `{ error: true, reason }` naming the field. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest('body: must be a JSON object');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw badRequest(describeIssue(result.error, body));
  return result.data;
}

const camelToSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** A query string as Koa parses it: a repeated parameter is an array. */
export type RawQuery = Record<string, string | string[] | undefined>;

/** How a route refuses a query: its own error body, naming the parameter. */
export type QueryRefusal = (name: string, problem: string) => Error;

/**
 * The query parameters of a request under their documented names. SPEC 1 rule 3 reads query
 * parameters verbatim, and the documented spelling always works exactly so; clients whose SDKs
 * rename parameters (`include_merged` for `includeMerged`, `dateFrom` for `date_from`) are served
 * too: the other casing of a documented name is an alias. Both spellings with different values is
 * a refusal naming the parameter, never a guess; with equal values it is one parameter.
 *
 * A parameter is given at most once, except the `lists`: their repeated form
 * (`measures=a&measures=b`, OpenAPI form style exploded, as generated clients send arrays) and
 * their comma list (`measures=a,b`, unexploded) are the same, and are returned as a comma list.
 * Parameters the route does not know are ignored, as before.
 */
export function readQuery(
  query: RawQuery,
  names: readonly string[],
  refuse: QueryRefusal,
  options: { lists?: readonly string[] } = {},
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const name of names) {
    const isList = options.lists?.includes(name) ?? false;
    let chosen: { spelling: string; value: string } | undefined;
    for (const spelling of new Set([name, snakeToCamel(name), camelToSnake(name)])) {
      const raw = Object.hasOwn(query, spelling) ? query[spelling] : undefined;
      if (raw === undefined) continue;
      if (Array.isArray(raw) && !isList) throw refuse(name, `must be given at most once (${spelling} is repeated)`);
      const value = Array.isArray(raw) ? raw.join(',') : raw;
      if (chosen && chosen.value !== value) {
        throw refuse(name, `must be given once: ${chosen.spelling} and ${spelling} disagree`);
      }
      chosen ??= { spelling, value };
    }
    if (chosen) out[name] = chosen.value;
  }
  return out;
}

/**
 * Validates query parameters against an object schema whose keys are the documented names (see
 * readQuery for the accepted spellings); a failure is a 400 `{ error: true, reason }` naming it.
 */
export function parseQuery<T extends z.ZodObject>(schema: T, query: RawQuery): z.infer<T> {
  const input = readQuery(query, Object.keys(schema.shape), (name, problem) => badRequest(`${name}: ${problem}`));
  const result = schema.safeParse(input);
  if (!result.success) throw badRequest(describeIssue(result.error, input));
  return result.data;
}

/** Path parameter schemas whose refusal is a 400 naming them (see pathValue). */
const valueParams = new WeakSet<z.ZodType>();

/**
 * Marks a path parameter that carries a value the route acts on (a user id to erase) rather than
 * naming a thing: its schema's refusal is a 400 naming it, not a 404.
 */
export function pathValue<S extends z.ZodType>(schema: S): S {
  valueParams.add(schema);
  return schema;
}

/**
 * Validates path parameters against their object schema. A parameter that names a thing (an id,
 * an asset) and is refused names nothing, like an unknown one: a 404 whose reason is its schema's
 * message (`feedback not found`). A value parameter (pathValue) refused is a 400 naming it.
 */
export function parseParams<T extends z.ZodObject>(schema: T, params: Record<string, string | undefined>): z.infer<T> {
  const result = schema.safeParse(params);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const refused = schema.shape[String(issue?.path[0])] as z.ZodType | undefined;
  if (refused && valueParams.has(refused)) throw badRequest(describeIssue(result.error, params));
  throw notFound(issue?.message ?? 'not found');
}

/**
 * Validates request headers against an object schema whose keys are the headers' names (any
 * letter case on the wire); an absent or empty header is undefined. A refusal is a 400 naming it.
 */
export function parseHeaders<T extends z.ZodObject>(schema: T, ctx: { get(name: string): string }): z.infer<T> {
  const input: Record<string, string | undefined> = {};
  for (const name of Object.keys(schema.shape)) input[name] = ctx.get(name) || undefined;
  const result = schema.safeParse(input);
  if (!result.success) throw badRequest(describeIssue(result.error, input));
  return result.data;
}

/** A query flag: `true`/`false` (also `1`/`0`). Anything else is a 400, not a silent false. */
export const queryBoolean = z
  .enum(['true', 'false', '1', '0'], { error: 'must be true or false' })
  .transform((value) => value === 'true' || value === '1');

/** An email address as requests give it (votes, feedback, SDK users, members). */
export const emailSchema = z.email({ error: 'must be an email address' }).max(320, 'must be at most 320 characters');

/** A user id of the client app: an opaque, non-empty string (SPEC 8.1). */
export const userIdSchema = z
  .string({ error: 'must be a string' })
  .min(1, 'must be at least 1 character')
  .max(255, 'must be at most 255 characters');

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (value: string) => UUID_PATTERN.test(value);

/** Why a string cannot be stored, or null when every store can hold it. */
export function unstorableReason(text: string): string | null {
  // PostgreSQL and ClickHouse hold UTF-8; a lone surrogate has no UTF-8 form. ClickHouse refuses
  // a high one outright (the whole insert fails) and would keep a low one as invalid UTF-8.
  if (!text.isWellFormed()) return 'must not contain a lone UTF-16 surrogate (such as \\ud800)';
  // PostgreSQL text cannot hold NUL (error 22021). ClickHouse could, but the same strings (user
  // ids, names) cross between the stores, so NUL is refused everywhere (docs/dead-letters.md).
  if (text.includes('\u0000')) return 'must not contain the NUL character (\\u0000)';
  return null;
}

/** A place in a parsed request: its key and the place that holds it (null at the root). */
type Place = { key: string; parent: Place | null } | null;

function describePlace(place: Place, root: string): string {
  const keys: string[] = [];
  for (let p = place; p !== null; p = p.parent) keys.push(p.key);
  if (keys.length === 0) return root;
  keys.reverse();
  // A place thousands of levels deep is named by its ends, not by a reason of megabytes.
  return keys.length <= 12 ? keys.join('.') : `${keys.slice(0, 8).join('.')}.….${keys.slice(-3).join('.')}`;
}

/**
 * The first string of a parsed request (a JSON body, or the query) that a store cannot hold,
 * keys included, as a 400 reason naming where it is (`events.3.userId: …`, `properties: a key
 * …`), or null. `root` names the place when the problem is a top-level key. Walks with its own
 * stack and links each place to its parent (the path is built only for the reason), so a deeply
 * nested body costs linear time and cannot overflow the call stack.
 */
export function findUnstorableString(value: unknown, root: string): string | null {
  const stack: { value: unknown; place: Place }[] = [{ value, place: null }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value: current, place } = item;
    if (typeof current === 'string') {
      const reason = unstorableReason(current);
      if (reason) return `${describePlace(place, root)}: ${reason}`;
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    const entries = Array.isArray(current) ? current.map((v, i) => [String(i), v] as const) : Object.entries(current);
    for (const [key] of entries) {
      const reason = unstorableReason(key);
      if (reason) return `${describePlace(place, root)}: a key ${reason}`;
    }
    // Pushed in reverse, so the first problem in document order is the one reported.
    for (const [key, child] of [...entries].reverse()) stack.push({ value: child, place: { key, parent: place } });
  }
  return null;
}
