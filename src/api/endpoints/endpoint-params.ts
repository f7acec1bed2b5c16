/*
 * The `{name:Type}` parameters of a published saved query (docs/project-sql.md, "Endpoints"): read
 * from its text, each given as a query parameter of the call (or its default), checked against
 * its type before the engine sees it, so a missing or mistyped one is a 400 that names it.
 */

/** A parameter of the query: its name and its ClickHouse type as written. */
export type EndpointParam = { name: string; type: string };

/** Parameter names as ClickHouse takes them; anything else in braces is not a parameter. */
const PARAM = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*([^{}]+?)\s*\}/g;

/**
 * The parameters of `text`, in order of first use, outside quoted strings and names (a `{x:T}`
 * inside a string literal is text to the engine). The same name used twice must have one type.
 */
export function paramsOf(text: string): EndpointParam[] | { conflict: string } {
  const found = new Map<string, string>();
  for (const segment of unquoted(text)) {
    for (const match of segment.matchAll(PARAM)) {
      const [, name = '', type = ''] = match;
      const known = found.get(name);
      if (known !== undefined && known !== type) return { conflict: name };
      found.set(name, type);
    }
  }
  return [...found].map(([name, type]) => ({ name, type }));
}

/** The parts of `text` outside '…', "…" and `…` (backslash escapes and doubled quotes kept inside). */
function unquoted(text: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let at = 0;
  while (at < text.length) {
    const char = text[at] as string;
    if (char === "'" || char === '"' || char === '`') {
      parts.push(text.slice(start, at));
      let end = at + 1;
      while (end < text.length) {
        if (text[end] === '\\') end += 2;
        else if (text[end] === char && text[end + 1] === char) end += 2;
        else if (text[end] === char) break;
        else end += 1;
      }
      at = end + 1;
      start = at;
      continue;
    }
    at += 1;
  }
  parts.push(text.slice(start));
  return parts;
}

const INT_RANGES: Record<string, [bigint, bigint]> = {
  Int8: [-128n, 127n],
  Int16: [-32768n, 32767n],
  Int32: [-2147483648n, 2147483647n],
  Int64: [-9223372036854775808n, 9223372036854775807n],
  UInt8: [0n, 255n],
  UInt16: [0n, 65535n],
  UInt32: [0n, 4294967295n],
  UInt64: [0n, 18446744073709551615n],
};

/**
 * Why `value` is not a value of `type`, or null when it is one (or when the type is one the
 * service does not check: the engine then refuses a bad value with a 400 of its own).
 * Nullable(T) and LowCardinality(T) are checked as T.
 */
export function valueProblem(type: string, value: string): string | null {
  const inner = /^(?:Nullable|LowCardinality)\((.+)\)$/.exec(type)?.[1];
  if (inner !== undefined) return valueProblem(inner, value);
  const range = INT_RANGES[type];
  if (range) {
    if (!/^-?\d+$/.test(value)) return `must be an integer (${type})`;
    const number = BigInt(value);
    return number < range[0] || number > range[1] ? `must be an integer from ${range[0]} to ${range[1]} (${type})` : null;
  }
  if (/^Float(32|64)$/.test(type) || /^Decimal/.test(type)) {
    return /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(value) ? null : `must be a number (${type})`;
  }
  if (type === 'Date' || type === 'Date32') {
    return /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) ? null : 'must be a date as YYYY-MM-DD';
  }
  if (/^DateTime(64)?(\(.*\))?$/.test(type)) {
    const ok = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?$/.test(value) || /^\d{1,12}$/.test(value);
    return ok ? null : 'must be a time as YYYY-MM-DD hh:mm:ss (UTC) or Unix seconds';
  }
  if (type === 'UUID') return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value) ? null : 'must be a UUID';
  if (type === 'Bool' || type === 'Boolean') return /^(true|false|0|1)$/.test(value) ? null : 'must be true or false';
  return null;
}

/** Bytes of one parameter value at most, as the SQL route's (PROJECT_SQL's 256 KiB). */
export const PARAM_VALUE_MAX_BYTES = 256 * 1024;
