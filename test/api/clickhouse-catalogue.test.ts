import { randomUUID } from 'node:crypto';
import { createClient } from '@clickhouse/client';
import { beforeAll, describe, expect, it } from 'vitest';
import { batchInsertSettings } from '../../src/olap/tables/insert-settings.js';
import { chTime } from '../../src/olap/time.js';
import { type ChAnswer, chRequest, createClickhouseCredential, type TestClickhouseCredential } from '../helpers/clickhouse-interface.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { seedAnalytics } from '../helpers/project-sql-seed.js';
import { useTestServer } from '../helpers/server.js';

/*
 * The catalogue of the ClickHouse interface (docs/clickhouse-interface.md, "The catalogue"), read as
 * the SQL tools read it, with another project's rows, a table and a database of the engine that no
 * tenant reads present: every answer is a server's shape, and none names, counts or sizes anything
 * but the credential's own tables.
 *
 * The tool queries are the SQL strings their published source sends (cited per query); the parts
 * they fill in at run time (the database name, a pattern) are filled as they would be.
 */

const server = useTestServer({ workers: false });
let own: TestProject;
let other: TestProject;
let cred: TestClickhouseCredential;
let base: string;
/** Figures and names of the engine that only the whole engine knows: none may appear in an answer. */
let forbidden: string[];

const FOREIGN_TABLE = 'foreign_secret_table';
const FOREIGN_DATABASE = 'foreign_secret_db';

beforeAll(async () => {
  own = await createProject(server, { plan: 'pro' });
  other = await createProject(server, { plan: 'team' });
  await seedAnalytics(server, own.id, 'own');
  await seedAnalytics(server, other.id, 'FOREIGN');
  // Many more rows of the other project, so that a count or size over every project stands out.
  const now = chTime(new Date(Date.now() - 60_000));
  await server.clickhouse.insert({
    table: 'events',
    values: Array.from({ length: 1_234 }, (_, i) => ({
      project_id: other.id,
      created_at: now,
      event_id: randomUUID(),
      event_name: `FOREIGN_bulk_${i % 7}`,
      user_id: `FOREIGN-bulk-${i}`,
      properties: { secret: 'FOREIGN-prop' },
      properties_raw: '{"secret":"FOREIGN-prop"}',
      received_at: now,
    })),
    format: 'JSONEachRow',
    clickhouse_settings: batchInsertSettings(randomUUID()),
  });
  await server.clickhouse.command({ query: `CREATE TABLE default.${FOREIGN_TABLE} (x UInt8) ENGINE = MergeTree ORDER BY x` });
  await server.clickhouse.command({ query: `CREATE DATABASE IF NOT EXISTS ${FOREIGN_DATABASE}` });
  cred = await createClickhouseCredential(server, own);
  base = `${server.url}/clickhouse`;
  const sizes = await server.clickhouseRows<{ total_rows: string | null; total_bytes: string | null; data_paths: string[] }>(
    "SELECT total_rows, total_bytes, data_paths FROM system.tables WHERE database = 'default' AND name IN ('events', 'facts', 'events_daily', 'events_hourly')",
  );
  forbidden = [
    'FOREIGN',
    FOREIGN_TABLE,
    FOREIGN_DATABASE,
    'events_daily_mv',
    'events_hourly_mv',
    server.dataDir,
    ...sizes.flatMap((row) => [row.total_rows, row.total_bytes]).filter((v): v is string => v !== null && Number(v) > 100),
  ];
  expect(forbidden.length).toBeGreaterThan(6); // the sizes of the tables are known to the engine
});

const q = (query: string, extra: Record<string, string> = {}) => chRequest(base, { query, ...extra }, { auth: cred });
const code = (r: ChAnswer) => r.headers.get('x-clickhouse-exception-code');

/** Runs `query`, expects a 200 and nothing of another project or of the server in the answer; returns its rows. */
async function clean(query: string): Promise<Record<string, unknown>[]> {
  const r = await q(query, { default_format: 'JSONEachRow' });
  expect(r.status, `${query}\n${r.text.slice(0, 400)}`).toBe(200);
  for (const word of forbidden) {
    // A figure is looked for as a whole value, a name anywhere.
    const found = /^\d+$/.test(word) ? new RegExp(`[:,[]"?${word}"?[,}\\]]`).test(r.text) : r.text.includes(word);
    expect(found, `${query} answered ${word}:\n${r.text.slice(0, 400)}`).toBe(false);
  }
  return r.text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const TENANT = ['events', 'events_daily', 'events_hourly', 'facts'];

describe('system tables, every column', () => {
  it('SELECT * of system.databases, system.tables and system.columns answers the server’s columns', async () => {
    const databases = await clean('SELECT * FROM system.databases');
    expect(databases.map((row) => row.name)).toEqual(['default']);
    expect(databases[0]).toMatchObject({ data_path: '', metadata_path: '' });
    const tables = await clean('SELECT * FROM system.tables ORDER BY name');
    expect(tables.map((row) => row.name)).toEqual(TENANT);
    for (const table of tables) {
      expect(table).toMatchObject({ total_rows: null, total_bytes: null, parts: null, active_parts: null, data_paths: [] });
      expect(table.dependencies_table).toEqual([]);
      expect(String(table.create_table_query)).toMatch(/^CREATE TABLE default\./);
    }
    const columns = await clean("SELECT * FROM system.columns WHERE table = 'events' ORDER BY position");
    expect(columns.map((row) => row.name)).toContain('project_id');
    for (const column of columns) expect(column).toMatchObject({ data_compressed_bytes: 0, data_uncompressed_bytes: 0, marks_bytes: 0 });
  });

  it('the sizes are NULL, with the server’s types, where the guard refused them before', async () => {
    const r = await q(
      'SELECT total_rows, total_bytes, lifetime_rows, data_paths, metadata_path FROM system.tables LIMIT 1 FORMAT TSVWithNamesAndTypes',
    );
    expect(r.status, r.text).toBe(200);
    expect(r.text.split('\n')[1]).toBe('Nullable(UInt64)\tNullable(UInt64)\tNullable(UInt64)\tArray(String)\tString');
    expect(r.text.split('\n')[2]).toBe('\\N\t\\N\t\\N\t[]\t');
  });

  it('aliases, joins and qualified names read the substitutes; the guard still refuses what it refused', async () => {
    expect(
      (
        await clean(
          'SELECT t.name, c.name AS column FROM system.tables AS t JOIN system.columns AS c ON c.table = t.name WHERE c.position = 1 ORDER BY t.name',
        )
      ).map((row) => row.name),
    ).toEqual(TENANT);
    expect((await clean('SELECT system.tables.name FROM system.tables ORDER BY name')).length).toBe(4);
    // A string that names a catalogue table is a string.
    expect(await clean("SELECT 'system.tables' AS s")).toEqual([{ s: 'system.tables' }]);
    for (const query of ['SELECT * FROM system.parts', 'SELECT * FROM system.query_log', 'SELECT * FROM system.disks']) {
      const r = await q(query);
      expect([r.status, code(r)], query).toEqual([403, '497']);
    }
  });
});

/** information_schema's views, each in the four spellings the engine has (both databases, both cases of the view). */
const SCHEMA_VIEWS = [
  'schemata',
  'tables',
  'columns',
  'views',
  'key_column_usage',
  'referential_constraints',
  'statistics',
  'character_sets',
  'collations',
  'engines',
];
/** A type as JSON's meta prints it (DESCRIBE breaks a Tuple's elements over lines). */
const oneLine = (columns: { name: string; type: string }[]) =>
  columns.map(({ name, type }) => ({ name, type: type.replace(/\(\s+/g, '(').replace(/\s+/g, ' ') }));
const spellings = (view: string) =>
  ['information_schema', 'INFORMATION_SCHEMA'].flatMap((schema) => [`${schema}.${view}`, `${schema}.${view.toUpperCase()}`]);

describe('information_schema, every view in every spelling', () => {
  it('schemata, tables, columns and views answer the visible tables; views has none', async () => {
    for (const view of ['schemata', 'tables', 'columns', 'views']) expect(spellings(view)).toHaveLength(4);
    for (const [schemata, tablesView, columnsView, views] of [0, 1, 2, 3].map((i) =>
      ['schemata', 'tables', 'columns', 'views'].map((view) => spellings(view)[i] as string),
    )) {
      expect((await clean(`SELECT * FROM ${schemata}`)).map((row) => row.schema_name)).toEqual(['default']);
      const tables = await clean(`SELECT * FROM ${tablesView} ORDER BY table_name`);
      expect(tables.map((row) => row.TABLE_NAME)).toEqual(TENANT);
      expect(tables[0]).toMatchObject({ table_type: 'BASE TABLE', table_rows: null, data_length: null, index_length: null });
      const columns = await clean(`SELECT * FROM ${columnsView} WHERE table_name = 'events'`);
      expect(columns.find((row) => row.column_name === 'project_id')).toMatchObject({ DATA_TYPE: 'UUID', is_nullable: 'NO' });
      expect(await clean(`SELECT * FROM ${views}`)).toEqual([]);
    }
    const described = await q('DESCRIBE TABLE information_schema.tables');
    expect(described.status, described.text).toBe(200);
    expect(described.text).toMatch(/^table_catalog\tString/);
    expect((await q('EXISTS TABLE INFORMATION_SCHEMA.COLUMNS')).text).toBe('1\n');
    expect((await q('EXISTS TABLE information_schema.KEY_COLUMN_USAGE')).text).toBe('1\n');
  });

  it('key_column_usage names the four tables’ primary keys; referential_constraints and statistics are empty, as on a server', async () => {
    for (const name of spellings('key_column_usage')) {
      const keys = await clean(`SELECT * FROM ${name} ORDER BY table_name, column_name`);
      expect(new Set(keys.map((row) => row.table_name))).toEqual(new Set(TENANT));
      expect(keys.find((row) => row.table_name === 'events' && row.column_name === 'project_id')).toMatchObject({
        constraint_name: 'PRIMARY',
        CONSTRAINT_NAME: 'PRIMARY',
        table_schema: 'default',
        referenced_table_name: null,
      });
      // The engine's own primary keys of the four tables, nothing else.
      const engine = await server.clickhouseRows<{ table: string; name: string }>(
        `SELECT table, name FROM system.columns WHERE database = currentDatabase() AND table IN ('${TENANT.join("', '")}') AND is_in_primary_key ORDER BY table, name`,
      );
      expect(keys.map((row) => [row.table_name, row.column_name])).toEqual(engine.map((row) => [row.table, row.name]));
    }
    for (const name of [...spellings('referential_constraints'), ...spellings('statistics')])
      expect(await clean(`SELECT * FROM ${name}`)).toEqual([]);
  });

  it('character_sets, collations and engines list what the engine has', async () => {
    for (const [view, column, source] of [
      ['character_sets', 'character_set_name', "SELECT arrayJoin(['utf8', 'utf8mb4', 'ascii', 'binary']) AS name"],
      ['collations', 'collation_name', 'SELECT name FROM system.collations'],
      ['engines', 'engine', 'SELECT name FROM system.table_engines'],
    ] as const) {
      const engine = (await server.clickhouseRows<{ name: string }>(source)).map((row) => row.name).sort();
      expect(engine.length).toBeGreaterThan(3);
      for (const name of spellings(view)) {
        const rows = await clean(`SELECT * FROM ${name}`);
        expect(rows.map((row) => row[column]).sort(), name).toEqual(engine);
        expect(rows.map((row) => row[column.toUpperCase()]).sort(), name).toEqual(engine);
      }
    }
    expect((await clean("SELECT support FROM information_schema.engines WHERE engine = getSetting('default_table_engine')"))[0]).toEqual({
      support: 'DEFAULT',
    });
  });

  it('every view in every spelling has the engine’s columns and types, read with the official client', async () => {
    const client = createClient({ url: server.url, pathname: '/clickhouse', username: cred.username, password: cred.password });
    try {
      for (const view of SCHEMA_VIEWS) {
        const engine = await server.clickhouseRows<{ name: string; type: string }>(`DESCRIBE TABLE information_schema.${view}`);
        const meta = oneLine(engine);
        for (const name of spellings(view)) {
          const answer = await (await client.query({ query: `SELECT * FROM ${name}`, format: 'JSON' })).json<Record<string, unknown>>();
          expect(answer.meta, name).toEqual(meta);
          const text = JSON.stringify(answer.data);
          for (const word of forbidden.filter((w) => !/^\d+$/.test(w))) expect(text, `${name} answered ${word}`).not.toContain(word);
          const described = await (await client.query({ query: `DESCRIBE TABLE ${name}`, format: 'JSONEachRow' })).json<{
            name: string;
            type: string;
          }>();
          expect(
            described.map(({ name, type }) => ({ name, type })),
            `DESCRIBE ${name}`,
          ).toEqual(meta);
        }
      }
      for (const table of ['system.databases', 'system.tables', 'system.columns']) {
        const engine = await server.clickhouseRows<{ name: string; type: string }>(`DESCRIBE TABLE ${table}`);
        const answer = await (await client.query({ query: `SELECT * FROM ${table}`, format: 'JSON' })).json<Record<string, unknown>>();
        expect(answer.meta, table).toEqual(oneLine(engine));
      }
    } finally {
      await client.close();
    }
  });

  it('SHOW TABLES FROM information_schema lists its views, as a server does', async () => {
    for (const schema of ['information_schema', 'INFORMATION_SCHEMA']) {
      const names = (await clean(`SHOW TABLES FROM ${schema}`)).map((row) => row.name);
      expect(names).toEqual(SCHEMA_VIEWS.flatMap((view) => [view, view.toUpperCase()]).sort());
    }
  });
});

describe('SHOW, DESCRIBE and EXISTS', () => {
  it('SHOW TABLES, SHOW DATABASES, DESCRIBE TABLE, EXISTS TABLE and SHOW CREATE TABLE', async () => {
    expect((await clean('SHOW DATABASES')).map((row) => row.name)).toEqual(['default']);
    expect((await clean('SHOW TABLES')).map((row) => row.name)).toEqual(TENANT);
    expect((await clean('DESCRIBE TABLE events')).map((row) => row.name)).toContain('event_name');
    expect(await clean('EXISTS TABLE events')).toEqual([{ result: 1 }]);
    expect(await clean(`EXISTS TABLE ${FOREIGN_TABLE}`)).toEqual([{ result: 0 }]);
    const [created] = await clean('SHOW CREATE TABLE default.events');
    expect(String(created?.statement)).toMatch(/^CREATE TABLE default\.events\n\(/);
    for (const name of [FOREIGN_TABLE, 'events_daily_mv', 'system.parts']) {
      const r = await q(`SHOW CREATE TABLE ${name}`);
      expect([r.status, code(r)], name).toEqual([404, '60']);
      for (const word of [FOREIGN_TABLE, 'events_daily_mv'].filter((w) => w !== name)) expect(r.text).not.toContain(word);
    }
  });
});

describe('the catalogue queries of real tools, replayed', () => {
  // DbGate, dbgate/dbgate plugins/dbgate-plugin-clickhouse/src/backend/sql/{tables,columns,viewsNoDefinition,tableModifications}.js
  // and Analyser.js (_computeSingleObjectId); OBJECT_ID_CONDITION is filled with ` is not null`, #DATABASE# with the database.
  const dbgate = [
    `select name as "pureName", metadata_modification_time as "contentHash", total_rows as "tableRowCount", uuid as "objectId", comment as "objectComment",
engine as "tableEngine", primary_key as "primaryKeyColumns", sorting_key as "sortingKeyColumns"
from system.tables
where database='default' and uuid is not null and engine != 'View';`,
    `select
    columns.table as "pureName",
    tables.uuid as "objectId",
    columns.name as "columnName",
    columns.type as "dataType",
    columns.comment as "columnComment",
    columns.default_expression as "defaultValue"
from system.columns
inner join system.tables on columns.table = tables.name and columns.database = tables.database
where columns.database='default' and tables.uuid is not null
order by toInt32(columns.position)`,
    `select
    tables.name as "pureName",
    tables.uuid as "objectId",
    tables.metadata_modification_time as "contentHash"
from system.tables
where tables.database='default' and tables.uuid is not null and tables.engine = 'View'`,
    `select metadata_modification_time as "contentHash", uuid as "objectId", engine as "tableEngine"
from system.tables
where database='default';`,
    "SELECT uuid as id FROM system.tables WHERE database = 'default' AND name='events'",
    // sql/views.js (as published in the npm package dbgate-plugin-clickhouse 7.2.2, dist/backend.js): the views, whose failure made DbGate fall back to viewsNoDefinition.
    `select
    tables.name as "pureName",
    tables.uuid as "objectId",
    views.view_definition as "viewDefinition",
    tables.metadata_modification_time as "contentHash"
from information_schema.views
inner join system.tables on views.table_name = tables.name and views.table_schema = tables.database
where views.table_schema='default' and tables.uuid is not null`,
  ];
  // Grafana's ClickHouse plugin, grafana/clickhouse-datasource src/data/CHDatasource.ts (fetchDatabases, fetchTables,
  // fetchColumnsFromTable, fetchSqlFunctions, getTagSource) and pkg/plugin/schema.go (Tables, fetchColumnsForAllTables).
  const grafana = [
    'SHOW DATABASES',
    'SHOW TABLES FROM "default"',
    'SHOW TABLES',
    'DESC TABLE "default"."events"',
    `SELECT
        name, is_aggregate, case_insensitive, alias_to, origin, description,
        syntax, arguments, returned_value, examples, categories
      FROM system.functions
      LIMIT 10000`,
    'SELECT name, type, table FROM system.columns',
    "SELECT name, type, table FROM system.columns WHERE database IN ('default')",
    "SELECT name, type, table FROM system.columns WHERE database IN ('default') AND table = 'events'",
    'SELECT database, name FROM system.tables ORDER BY database, name',
    "SELECT database, table, name, type, comment FROM system.columns WHERE (database, table) IN (('default', 'events')) OR (database = currentDatabase() AND table IN ('facts')) ORDER BY database, table, position",
  ];
  // DBeaver, dbeaver/dbeaver plugins/org.jkiss.dbeaver.ext.clickhouse/src/org/jkiss/dbeaver/ext/clickhouse/model/ClickhouseMetaModel.java
  // (prepareTableLoadStatement with the database bound, getTableDDL).
  const dbeaver = [
    "SELECT name as TABLE_NAME, engine as TABLE_TYPE, database as TABLE_SCHEM,comment as REMARKS, * FROM system.tables\nWHERE database = 'default'",
    "SELECT name as TABLE_NAME, engine as TABLE_TYPE, database as TABLE_SCHEM,comment as REMARKS, * FROM system.tables\nWHERE database = 'default' and name='events'",
    'SHOW CREATE TABLE "default"."events"',
  ];
  // clickhouse-jdbc's DatabaseMetaData, ClickHouse/clickhouse-java jdbc-v2/src/main/java/com/clickhouse/jdbc/metadata/DatabaseMetaDataImpl.java
  // (getSchemas, getTables with the patterns bound, getColumns with generateSqlTypeSizes' multiIf shortened to three types).
  const jdbc = [
    "SELECT name AS TABLE_SCHEM, '' AS TABLE_CATALOG FROM system.databases ORDER BY name",
    "SELECT '' AS TABLE_CAT, t.database AS TABLE_SCHEM, t.name AS TABLE_NAME, if(t.is_temporary = 1, concat('Temporary', t.engine), t.engine) AS TABLE_TYPE, t.comment AS REMARKS, CAST(null as Nullable(String)) AS TYPE_CAT, d.engine AS TYPE_SCHEM, CAST(null as Nullable(String)) AS TYPE_NAME, CAST(null as Nullable(String)) AS SELF_REFERENCING_COL_NAME, CAST(null as Nullable(String)) AS REF_GENERATION FROM system.tables t JOIN system.databases d ON system.tables.database = system.databases.name WHERE t.database LIKE '%' AND t.name LIKE '%' AND ( (t.engine NOT IN ('View','MaterializedView') AND NOT t.engine LIKE 'System%' AND NOT t.engine LIKE 'Async%' AND t.is_temporary = 0)) AND (t.is_temporary = 0)",
    "SELECT '' AS TABLE_CAT, database AS TABLE_SCHEM, table AS TABLE_NAME, name AS COLUMN_NAME, toInt32(1111) AS DATA_TYPE, type AS TYPE_NAME, toInt32(multiIf(character_octet_length IS NOT NULL, character_octet_length, system.columns.type == 'Int8', 1, system.columns.type == 'UUID', 16, system.columns.type == 'Int64', 8, numeric_precision IS NOT NULL, numeric_precision, 0)) AS COLUMN_SIZE, toInt32(0) AS BUFFER_LENGTH, toInt32(IF (numeric_scale == 0, NULL, numeric_scale)) as DECIMAL_DIGITS,  toInt32(numeric_precision_radix) AS NUM_PREC_RADIX, toInt32(position(type, 'Nullable(') >= 1 ?1 : 0) as NULLABLE, system.columns.comment AS REMARKS, system.columns.default_expression AS COLUMN_DEF, toInt32(0) AS SQL_DATA_TYPE, toInt32(0) AS SQL_DATETIME_SUB, character_octet_length::Nullable(Int32) AS CHAR_OCTET_LENGTH, toInt32(system.columns.position) AS ORDINAL_POSITION, position(upper(type), 'NULLABLE') >= 1 ? 'YES' : 'NO' AS IS_NULLABLE,CAST(NULL as Nullable(String)) AS SCOPE_CATALOG, CAST(NULL as Nullable(String)) AS SCOPE_SCHEMA, CAST(NULL as Nullable(String)) AS SCOPE_TABLE, CAST(NULL as Nullable(Int16)) AS SOURCE_DATA_TYPE, 'NO' as IS_AUTOINCREMENT, 'NO' as IS_GENERATEDCOLUMN  FROM system.columns WHERE database LIKE 'default' AND table LIKE '%' AND name LIKE '%' ORDER BY TABLE_SCHEM, TABLE_NAME, ORDINAL_POSITION",
  ];

  it('DbGate’s analysis lists the four tables, with their columns and no views', async () => {
    const answers = [];
    for (const query of dbgate) answers.push(await clean(query));
    expect(answers[0]?.map((row) => row.pureName).sort()).toEqual(TENANT);
    expect(answers[0]?.[0]).toHaveProperty('tableRowCount', null);
    expect(new Set(answers[1]?.map((row) => row.pureName))).toEqual(new Set(TENANT));
    expect(answers[2]).toEqual([]);
    expect(answers[3]).toHaveLength(4);
    expect(answers[4]).toHaveLength(1);
    expect(answers[5]).toEqual([]);
  });

  it('Grafana’s database, table and column pickers', async () => {
    const answers = [];
    for (const query of grafana) answers.push(await clean(query));
    expect(answers[0]).toEqual([{ name: 'default' }]);
    expect(answers[1]?.map((row) => row.name)).toEqual(TENANT);
    expect(answers[3]?.map((row) => row.name)).toContain('project_id');
    expect(new Set(answers[5]?.map((row) => row.table))).toEqual(new Set(TENANT));
    expect(answers[8]?.map((row) => row.name)).toEqual(TENANT);
  });

  it('DBeaver’s table load and DDL', async () => {
    const answers = [];
    for (const query of dbeaver) answers.push(await clean(query));
    expect(answers[0]?.map((row) => row.TABLE_NAME).sort()).toEqual(TENANT);
    expect(answers[1]).toHaveLength(1);
    expect(String(answers[2]?.[0]?.statement)).toMatch(/^CREATE TABLE default\.events/);
  });

  it('clickhouse-jdbc’s getSchemas, getTables and getColumns', async () => {
    const answers = [];
    for (const query of jdbc) answers.push(await clean(query));
    expect(answers[0]).toEqual([{ TABLE_SCHEM: 'default', TABLE_CATALOG: '' }]);
    expect(answers[1]?.map((row) => row.TABLE_NAME).sort()).toEqual(TENANT);
    expect(new Set(answers[2]?.map((row) => row.TABLE_NAME))).toEqual(new Set(TENANT));
  });
});
