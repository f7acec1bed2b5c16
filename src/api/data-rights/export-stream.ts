import { Readable } from 'node:stream';

export const EXPORT_CONTENT_TYPES = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
  parquet: 'application/vnd.apache.parquet',
} as const;

/**
 * A byte stream of `chunks` whose first chunk has already been produced: a failure before any
 * byte (a query refused, a database down) is thrown here and answered as a 500 in the server-wide
 * body, instead of a 200 whose body breaks off. Later chunks are produced only as the client
 * reads (backpressure), and destroying the stream (the client went away) ends the iteration, which
 * closes the cursor or query behind it.
 */
export async function startedStream(chunks: AsyncIterable<Buffer | string>): Promise<Readable> {
  const iterator = chunks[Symbol.asyncIterator]();
  const first = await iterator.next();
  async function* rest(): AsyncGenerator<Buffer | string> {
    try {
      if (first.done) return;
      yield first.value;
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        yield next.value;
      }
    } finally {
      await iterator.return?.();
    }
  }
  return Readable.from(rest(), { objectMode: false, highWaterMark: 1 });
}

/** RFC 4180 field: quoted when it holds a comma, quote or line break; null is an empty field. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const text = value instanceof Date ? value.toISOString() : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * Rows of `batches` as CSV (a header line first) or JSON Lines, one string per batch: a batch is
 * encoded only when the previous one has been taken.
 */
export async function* encodeRows<Row extends Record<string, unknown>>(
  batches: AsyncIterable<Row[]>,
  columns: readonly (keyof Row & string)[],
  format: 'csv' | 'jsonl',
): AsyncGenerator<string> {
  if (format === 'csv') yield `${columns.join(',')}\r\n`;
  for await (const batch of batches) {
    if (batch.length === 0) continue;
    yield format === 'csv'
      ? batch.map((row) => `${columns.map((column) => csvField(row[column])).join(',')}\r\n`).join('')
      : batch.map((row) => `${JSON.stringify(Object.fromEntries(columns.map((column) => [column, row[column] ?? null])))}\n`).join('');
  }
}
