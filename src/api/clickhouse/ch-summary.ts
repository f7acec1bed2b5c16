import type { StreamProgress } from '../../olap/readonly/readonly-session.js';

/** The fields of X-ClickHouse-Summary and X-ClickHouse-Progress, in a server's order, each a decimal string. */
export type ClickhouseSummary = {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
};

/**
 * The summary of a query as far as it is known (`elapsedNs` since it started): a ClickHouse
 * server's own figures when one ran it, else what embedded chDB reports: the result's rows once the
 * statement has finished, and the bytes of the output so far. chDB does not report the rows and bytes it
 * read, so read_rows, read_bytes and total_rows_to_read stay 0 there (docs/clickhouse-interface.md).
 * A read writes nothing: written_rows and written_bytes are 0.
 */
export function summaryOf(progress: StreamProgress, elapsedNs: bigint): ClickhouseSummary {
  const server = progress.serverSummary ?? {};
  const figure = (name: keyof ClickhouseSummary, own: number | bigint) => {
    const given = server[name];
    return typeof given === 'string' && /^\d+$/.test(given) && given !== '0' ? given : String(own);
  };
  return {
    read_rows: figure('read_rows', 0),
    read_bytes: figure('read_bytes', 0),
    written_rows: '0',
    written_bytes: '0',
    total_rows_to_read: figure('total_rows_to_read', 0),
    result_rows: figure('result_rows', progress.resultRows),
    result_bytes: figure('result_bytes', progress.resultBytes),
    elapsed_ns: String(elapsedNs),
  };
}
