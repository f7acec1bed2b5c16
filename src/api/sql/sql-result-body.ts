import type { RequestContext } from '../state.js';

/** A read-only query's answer as the lanes give it: the rows still JSON text (olap/readonly-query.ts). */
export type SqlResult = {
  columns: { name: string; type: string }[];
  rows_json: Buffer;
  row_count: number;
  truncated: boolean;
  elapsed_ms: number;
};

/** The answer as it travels: the rows as objects (what sql.responses.ts describes). */
export type SqlResultBody<Extra> = Omit<SqlResult, 'rows_json'> & { rows: Record<string, unknown>[] } & Extra;

/**
 * Answers a read-only query's result, plus `extra` fields, as one JSON body whose rows are spliced
 * in as the engine wrote them: a result of up to 16 MiB is copied, never parsed and serialized
 * again on the event loop, where it stalled every other request (issue 20: 129 MB of rows held
 * another account's GET /feedbacks for seconds).
 */
export function answerSqlResult<Extra extends Record<string, unknown>>(ctx: RequestContext, result: SqlResult, extra: Extra): void {
  const { columns, rows_json: rows, ...counts } = result;
  const head = Buffer.from(`{"columns":${JSON.stringify(columns)},"rows":`);
  const tail = Buffer.from(`,${JSON.stringify({ ...counts, ...extra }).slice(1)}`);
  ctx.body = Buffer.concat([head, rows, tail]);
  ctx.type = 'application/json; charset=utf-8';
}
