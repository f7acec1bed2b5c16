import type { ReadonlyAnswer } from '../../olap/readonly/readonly-query.js';

/*
 * Answers of published queries kept for their endpoint's cache_seconds (docs/project-sql.md,
 * "Endpoints"), in this process: a hit is served without the engine. The key is written by the
 * caller from everything the answer depends on (the endpoint, the query's text, the window, every
 * parameter's value), so a changed query or a new day never finds an old answer. Bounded by entries
 * and by bytes; the oldest go first.
 */

type Entry = { answer: ReadonlyAnswer; expires: number; bytes: number };

export type EndpointCache = {
  get(key: string): ReadonlyAnswer | undefined;
  set(key: string, answer: ReadonlyAnswer, seconds: number): void;
  /** Drops every answer of one endpoint (unpublished or republished). */
  dropEndpoint(endpointId: string): void;
};

export function createEndpointCache(
  limits: { maxEntries: number; maxBytes: number } = { maxEntries: 2_000, maxBytes: 64 * 1024 * 1024 },
): EndpointCache {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const remove = (key: string) => {
    const entry = entries.get(key);
    if (!entry) return;
    entries.delete(key);
    bytes -= entry.bytes;
  };
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expires <= Date.now()) {
        remove(key);
        return undefined;
      }
      return entry.answer;
    },
    set(key, answer, seconds) {
      if (seconds <= 0) return;
      const size = answer.rows_json.byteLength + 256;
      if (size > limits.maxBytes / 8) return; // one answer never takes the room of many
      remove(key);
      entries.set(key, { answer, expires: Date.now() + seconds * 1000, bytes: size });
      bytes += size;
      for (const oldest of entries.keys()) {
        if (entries.size <= limits.maxEntries && bytes <= limits.maxBytes) break;
        remove(oldest);
      }
    },
    dropEndpoint(endpointId) {
      for (const key of entries.keys()) if (key.startsWith(`${endpointId}\n`)) remove(key);
    },
  };
}

/** The cache key: the endpoint, then each part on a line of its own (a value's own line breaks are escaped by JSON). */
export function cacheKey(endpointId: string, parts: readonly unknown[]): string {
  return `${endpointId}\n${JSON.stringify(parts)}`;
}
