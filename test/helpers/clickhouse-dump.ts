/**
 * A short child process that reads the events of one project from an embedded ClickHouse (chDB)
 * data directory and prints them as one JSON line: `DUMP {"rows":[[event_id, copies], ...]}`.
 *
 * chDB binds a data directory to the process that opens it (and a process to one directory), so
 * a test reads a stopped service's ClickHouse through this script instead of opening it itself.
 * Besides the copies of each event, it prints what the materialized views derived from them:
 * `indexed` (ids in event_ids) and `rollupMismatches` (rollup rows of the events' days that
 * differ from the events), so a crash test can check that nothing was left short.
 * Input from the environment: DUMP_DATA_DIR (the service's DATA_DIR), DUMP_PROJECT_ID.
 */
import { createClickHouse } from '../../src/olap/clickhouse.js';
import { rollupMismatches } from '../../src/olap/tables/rollups.js';

const dataDir = process.env.DUMP_DATA_DIR;
const projectId = process.env.DUMP_PROJECT_ID;
if (!dataDir || !projectId) {
  process.stderr.write('DUMP_DATA_DIR and DUMP_PROJECT_ID are required\n');
  process.exit(2);
}

const client = createClickHouse({ url: undefined, dataDir });
try {
  const result = await client.query({
    query: `SELECT toString(event_id) AS id, count() AS copies
            FROM events WHERE project_id = {p:UUID} GROUP BY event_id`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  const rows = (await result.json<{ id: string; copies: string | number }>()).map((row) => [row.id, Number(row.copies)]);
  const derived = await client.query({
    query: `SELECT (SELECT uniqExact(event_id) FROM event_ids WHERE project_id = {p:UUID}) AS indexed,
                   (SELECT groupUniqArray(toString(toDate(created_at, 'UTC'))) FROM events WHERE project_id = {p:UUID}) AS days`,
    query_params: { p: projectId },
    format: 'JSONEachRow',
  });
  const [row] = await derived.json<{ indexed: string | number; days: string[] }>();
  const indexed = Number(row?.indexed ?? 0);
  const mismatches = await rollupMismatches({ client }, projectId, row?.days ?? []);
  const dump = { rows, indexed, rollupMismatches: mismatches };
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(`DUMP ${JSON.stringify(dump)}\n`, (error) => (error ? reject(error) : resolve())),
  );
  await client.close();
  process.exit(0);
} catch (error) {
  process.stderr.write(`dump failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
