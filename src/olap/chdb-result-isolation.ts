import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ConnBaseQueryParams, ConnExecParams, ConnExecResult, Connection, ConnQueryResult } from 'chdb/connection';

/**
 * A chDB connection for `@clickhouse/client` whose every query result is exactly that query's
 * output (docs/clickhouse.md, "One query's output never reaches another's result").
 *
 * Measured with chdb 3.4.0 (libchdb 26.7): when a query fails after it has written part of its
 * output (a throwIf, a memory or time limit), libchdb keeps those bytes in the connection's
 * output buffer, and the next query on the same connection returns them in front of its own
 * output; a second failure adds to them. Whole JSON results then fail to parse, and row formats
 * (JSONEachRow) silently gain the failed query's rows.
 *
 * Each query therefore runs as a two-statement script (the same mechanism the adapter uses for its
 * `SET` prefix): first `SELECT '<random marker>'`, then the query. Stale bytes can only come
 * before the marker, since a connection runs one call at a time, so the result is what follows
 * the marker. A result without its marker is refused instead of returned.
 */
export function isolateChdbResults(inner: Connection<Readable>): Connection<Readable> {
  return {
    ping: (params) => inner.ping(params),
    command: (params) => inner.command(params),
    insert: (params) => inner.insert(params),
    close: () => inner.close(),
    async query(params: ConnBaseQueryParams): Promise<ConnQueryResult<Readable>> {
      const marker = newMarker();
      const result = await inner.query({ ...params, query: withMarker(marker, params.query) });
      return { ...result, stream: await afterMarker(marker, result.stream) };
    },
    async exec(params: ConnExecParams<Readable>): Promise<ConnExecResult<Readable>> {
      // An exec with values is an INSERT whose data follows the statement text: no marker before
      // it, and its (empty) output is not a result anyone reads.
      if (params.values !== undefined) return inner.exec(params);
      const marker = newMarker();
      const result = await inner.exec({ ...params, query: withMarker(marker, params.query) });
      return { ...result, stream: await afterMarker(marker, result.stream) };
    },
  };
}

/** Thrown when a chDB result does not carry the marker of its own query. */
export class ForeignChdbOutput extends Error {
  override name = 'ForeignChdbOutput';
}

const newMarker = () => `chdb-result-start-${randomUUID()}`;

/** The marker is a literal of our own (a UUID), never request text. */
const withMarker = (marker: string, query: string) => `SELECT '${marker}' FORMAT TSVRaw;\n${query}`;

async function afterMarker(marker: string, stream: Readable): Promise<Readable> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  const bytes = Buffer.concat(chunks);
  const line = Buffer.from(`${marker}\n`);
  const at = bytes.indexOf(line);
  if (at < 0) throw new ForeignChdbOutput('chDB answered a result without its start marker; refused rather than returned');
  return readableOf(bytes.subarray(at + line.length));
}

/** A byte stream of one buffer, as the adapter returns it. */
function readableOf(bytes: Buffer): Readable {
  const readable = new Readable({
    read() {
      this.push(bytes);
      this.push(null);
    },
  });
  // ResultSet.close() destroys an unread stream with an error; nothing else can fail here.
  readable.on('error', () => {});
  return readable;
}
