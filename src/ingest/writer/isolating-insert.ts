import { type DataError, insertDataError } from '../../olap/tables/insert-errors.js';

/** A row ClickHouse refused on its own, with the refusal. */
export type RefusedRow<Row> = { row: Row; error: DataError };

/**
 * Inserts `rows` under `token`; when ClickHouse refuses the insert because of its data, splits
 * it in two halves inserted under `${token}/0` and `${token}/1`, and so on down to single rows,
 * until the rows it refuses alone are found. Those are returned (for the dead letters); every
 * other row is stored.
 *
 * Tokens follow from the batch's token and the rows' order alone, so the same batch isolated
 * again (a retry after a crash, or after a failure part-way through) splits the same way and
 * ClickHouse drops every part it already stored. Any failure that is not the data's (the engine
 * unreachable, a timeout, too many parts) is thrown as it is: the caller retries the batch.
 *
 * Cost: about 2·k·log2(n) inserts for k refused rows among n; the API's validation keeps known
 * causes out, so a refused row is the exception.
 */
export async function insertIsolating<Row>(
  rows: Row[],
  token: string,
  insert: (rows: Row[], token: string) => Promise<void>,
): Promise<RefusedRow<Row>[]> {
  if (rows.length === 0) return [];
  try {
    await insert(rows, token);
    return [];
  } catch (error) {
    const dataError = insertDataError(error);
    if (!dataError) throw error;
    const [only] = rows;
    if (rows.length === 1 && only !== undefined) return [{ row: only, error: dataError }];
    const middle = Math.ceil(rows.length / 2);
    const left = await insertIsolating(rows.slice(0, middle), `${token}/0`, insert);
    const right = await insertIsolating(rows.slice(middle), `${token}/1`, insert);
    return [...left, ...right];
  }
}
