import type { Readable } from 'node:stream';
import type { Connection } from 'chdb/connection';

/**
 * A chDB connection for `@clickhouse/client` on which a request's `clickhouse_settings` apply to
 * that request only, as they do over HTTP (docs/clickhouse.md, "Settings apply to one query").
 *
 * Measured with chdb 3.4.0: the adapter applies a request's settings as `SET k = v;` statements
 * in front of its query, on the connection's one long-lived session, so they stay in force for
 * every later query. A migration's `insert_deduplication_token` was still set an hour later, and
 * an INSERT … SELECT without a token of its own then lost 800,000 of 10 million rows: its blocks
 * were deduplicated as repeats of the migration's. Every insert of ours carries its own token, so
 * nothing was lost in the service, but any setting (a time limit, an output format) leaked into
 * the next unrelated query.
 *
 * So every request first resets (`SET k = DEFAULT`) each setting any request has set, except the
 * ones it sets itself, in the same script as the query: no other query can run in between, and
 * queries on a connection are not guaranteed to run in the order they were sent. The settings
 * the service uses are known from the start, so even the first request after start is clean.
 */
export function scopeChdbSettings(inner: Connection<Readable>, known: readonly string[] = SERVICE_SETTINGS): Connection<Readable> {
  const everSet = new Set<string>(known);
  const scoped = <P extends { query: string; clickhouse_settings?: Record<string, unknown> | undefined }>(params: P): P => {
    const own = params.clickhouse_settings ?? {};
    const resets: string[] = [];
    for (const key of everSet) if (!(key in own)) resets.push(`SET ${key} = DEFAULT;`);
    for (const key of Object.keys(own)) if (SETTING_NAME.test(key)) everSet.add(key);
    return resets.length === 0 ? params : { ...params, query: `${resets.join(' ')}\n${params.query}` };
  };
  return {
    ping: (params) => inner.ping(params),
    query: (params) => inner.query(scoped(params)),
    command: (params) => inner.command(scoped(params)),
    exec: (params) => inner.exec(scoped(params)),
    insert: (params) => inner.insert(scoped(params)),
    close: () => inner.close(),
  };
}

/** What a setting's name may be (the adapter refuses any other, so it never becomes SQL text). */
const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Every setting the service passes per request on the embedded connection (grep
 * `clickhouse_settings` in src/olap). One missing here is still reset once a request has set it.
 */
export const SERVICE_SETTINGS = [
  'async_insert',
  'insert_deduplicate',
  'insert_deduplication_token',
  'deduplicate_blocks_in_dependent_materialized_views',
  'mutations_sync',
  'output_format_json_quote_64bit_integers',
  'cancel_http_readonly_queries_on_client_close',
  'output_format_parquet_compression_method',
  'output_format_parquet_string_as_string',
] as const;
