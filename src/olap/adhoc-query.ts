import type { ClickHouseClient } from './clickhouse.js';

export const ADHOC_MAX_ROWS = 10_000;
export const ADHOC_MAX_SECONDS = 10;

export class AdhocQueryRefused extends Error {
  override name = 'AdhocQueryRefused';
}

export type AdhocResult = {
  columns: { name: string; type: string }[];
  rows: Record<string, unknown>[];
  row_count: number;
  /** true when the result had more rows than the limit and was cut. */
  truncated: boolean;
  elapsed_ms: number;
};

/**
 * Runs one read-only query of an operator. The text is only ever placed inside a subquery, so
 * a second statement (`; DROP …`) is a syntax error, not a statement. The query runs with
 * query-level `readonly = 1` and time and row limits. Its own SETTINGS clauses are refused:
 * measured in chDB, a subquery's `SETTINGS readonly = 0` lifts the outer readonly, so a query
 * that changes any setting is rejected by inspecting ClickHouse's own parse tree first.
 */
export async function runAdhocQuery(
  client: ClickHouseClient,
  text: string,
  params: Record<string, unknown>,
  maxRows = ADHOC_MAX_ROWS,
): Promise<AdhocResult> {
  const wrapped = `SELECT * FROM (\n${text}\n)`;
  let ast: string;
  try {
    const explained = await client.query({ query: `EXPLAIN AST ${wrapped}`, format: 'TabSeparatedRaw', query_params: params });
    ast = await explained.text();
  } catch (error) {
    throw new AdhocQueryRefused(`not a single valid SELECT: ${firstLine(error)}`);
  }
  const nodes = ast.split('\n').map((line) => line.replace(/^"|"$/g, '').trim());
  if (nodes.some((node) => node === 'Set' || node.startsWith('Set '))) {
    throw new AdhocQueryRefused('queries may not change settings (SETTINGS clauses are refused)');
  }
  const started = performance.now();
  let result;
  try {
    result = await client.query({
      query: `${wrapped}
        LIMIT ${maxRows + 1}
        SETTINGS readonly = 1, max_execution_time = ${ADHOC_MAX_SECONDS}, max_result_rows = ${maxRows + 1},
                 result_overflow_mode = 'break'`,
      format: 'JSON',
      query_params: params,
    });
  } catch (error) {
    throw new AdhocQueryRefused(firstLine(error));
  }
  const body = await result.json<Record<string, unknown>>();
  const rows = body.data;
  return {
    columns: body.meta ?? [],
    rows: rows.slice(0, maxRows),
    row_count: Math.min(rows.length, maxRows),
    truncated: rows.length > maxRows,
    elapsed_ms: Math.round(performance.now() - started),
  };
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).slice(0, 500);
}
