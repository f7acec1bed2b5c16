import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';

/**
 * A page's inputs kept in its query string, so a view can be shared and reloaded: `params` is
 * the current query (repeated names kept in order, which preact-iso's `query` record drops), and
 * `setParams` writes a new one, as a new history entry unless `replace`.
 */
export function useQueryState() {
  const { url, path, route } = useLocation();
  const at = url.indexOf('?');
  const search = at === -1 ? '' : url.slice(at + 1);
  const params = new URLSearchParams(search);
  const setParams = (next: URLSearchParams, replace = false) => {
    const text = next.toString();
    if (text === search) return;
    route(`${path}${text ? `?${text}` : ''}`, replace);
  };
  return { params, search, setParams };
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** A day from the query (`2026-11-27`), or `fallback` when absent or not a day. */
export function dayParam(params: URLSearchParams, name: string, fallback: string): string {
  const value = params.get(name);
  return value !== null && DAY.test(value) ? value : fallback;
}

/** A whole number from the query within [min, max], or `fallback`. */
export function intParam(params: URLSearchParams, name: string, min: number, max: number, fallback: number): number {
  const value = Number(params.get(name) ?? Number.NaN);
  return Number.isInteger(value) && value >= min && value <= max ? value : fallback;
}

/** A trimmed, non-empty text from the query, or undefined. */
export function textParam(params: URLSearchParams, name: string): string | undefined {
  const value = params.get(name)?.trim();
  return value ? value : undefined;
}

/** Builds a query from entries, leaving out the empty ones; arrays become repeated names. */
export function toParams(entries: Record<string, string | number | undefined | null | readonly string[]>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(entries)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) for (const item of value) params.append(name, item);
    else params.set(name, String(value));
  }
  return params;
}

/**
 * A form's fields, started from the inputs its page read from the URL (`initial`) and set again
 * whenever the query string (`search`) changes: back, forward or a pasted link. `set` changes
 * some fields and keeps the others.
 */
export function useUrlDraft<T extends object>(initial: T, search: string): [T, (change: Partial<T>) => void] {
  const [draft, setDraft] = useState(initial);
  useEffect(() => setDraft(initial), [search]);
  return [draft, (change) => setDraft((current) => ({ ...current, ...change }))];
}
