import { jsonLines, ReadonlyQueryRefused } from './readonly-query.js';
import type { ReadonlySession } from './readonly-session.js';

/*
 * The catalogue the ClickHouse interface answers (docs/clickhouse-interface.md, "The catalogue"):
 * system.databases, system.tables, system.columns and every view of information_schema (schemata,
 * tables, columns, views, key_column_usage, referential_constraints, statistics, character_sets,
 * collations, engines), in each spelling the engine has, with every column a server has, as a tool
 * reads them to draw its tree.
 *
 * A read of one of them is answered from a subquery the service writes (a "substitute") in place
 * of the table: it reads the system table (whose rows the session's row filters already narrow to
 * the service's database and the tenant tables, tenant-filters.ts) and answers each column either
 * as the engine has it, when the column describes only the table's definition, or as the type's
 * NULL (or empty value, for a type that is not Nullable) when it would describe more than the
 * project (row counts and sizes over every project's rows) or the server (paths, disks, the views
 * that read the tables). The hidden columns are never read, so the tenant guard's column check
 * (tenant-guard.ts, HIDDEN_COLUMNS) still holds of what runs.
 *
 * The answer is an allow-list: a column the service does not know (a newer engine's) is masked,
 * so nothing the guard refused before becomes readable through the substitute.
 */

/** Columns answered as the engine has them, by system table; every other column is masked. */
const DEFINITION_COLUMNS: Readonly<Record<SystemTable, ReadonlySet<string>>> = {
  'system.databases': new Set(['name', 'engine', 'uuid', 'engine_full', 'comment', 'is_external', 'database']),
  'system.tables': new Set([
    'database',
    'name',
    'uuid',
    'engine',
    'is_temporary',
    'metadata_modification_time',
    'metadata_version',
    'create_table_query',
    'engine_full',
    'as_select',
    'parameterized_view_parameters',
    'partition_key',
    'sorting_key',
    'primary_key',
    'sampling_key',
    'unique_key',
    'storage_policy',
    'comment',
    'has_own_data',
    'target_database',
    'target_table',
    'definer',
    'table',
  ]),
  'system.columns': new Set([
    'database',
    'table',
    'name',
    'type',
    'position',
    'default_kind',
    'default_expression',
    'comment',
    'is_in_partition_key',
    'is_in_sorting_key',
    'is_in_primary_key',
    'is_in_sampling_key',
    'compression_codec',
    'character_octet_length',
    'numeric_precision',
    'numeric_precision_radix',
    'numeric_scale',
    'datetime_precision',
    'serialization_hint',
    'statistics',
    'column',
  ]),
};

type SystemTable = 'system.databases' | 'system.tables' | 'system.columns';
const SYSTEM_TABLES: readonly SystemTable[] = ['system.databases', 'system.tables', 'system.columns'];

/** information_schema's views whose columns are written out here (schemaSubstitutes). */
const SCHEMA_VIEWS = ['schemata', 'tables', 'columns', 'views'] as const;

/**
 * information_schema's other views, answered in the engine's own columns and types (read with
 * DESCRIBE) from the values given here for its lower-case columns, as the engine's own definitions
 * of them compute them (their create_table_query on chDB 26.7), over the
 * substitutes: each upper-case column repeats its lower-case one, and a column given no value is
 * NULL (or its type's empty value). `from` is a system table (its substitute when it has one) or
 * none (one row of constants); `where` keeps the rows a server keeps.
 */
const OTHER_SCHEMA_VIEWS: Readonly<Record<string, { from?: string; where?: string; values: Readonly<Record<string, string>> }>> = {
  // A MergeTree table's primary key columns, each as constraint `PRIMARY`: the four tables' only.
  key_column_usage: {
    from: 'system.columns',
    where: 'is_in_primary_key',
    values: {
      constraint_catalog: "'def'",
      constraint_schema: 'database',
      constraint_name: "'PRIMARY'",
      table_catalog: "'def'",
      table_schema: 'database',
      table_name: '`table`',
      column_name: 'name',
      ordinal_position: '1',
    },
  },
  // ClickHouse has no foreign keys and keeps no index statistics here: a server answers no rows.
  referential_constraints: { where: '0', values: {} },
  statistics: { where: '0', values: {} },
  // The engine's constants and lists of what it was built with; nobody's data.
  character_sets: { values: { character_set_name: "arrayJoin(['utf8', 'utf8mb4', 'ascii', 'binary'])" } },
  collations: { from: 'system.collations', values: { collation_name: 'name' } },
  engines: {
    from: 'system.table_engines',
    values: { engine: 'name', support: "if(name = getSetting('default_table_engine'), 'DEFAULT', 'YES')" },
  },
};

/** information_schema and INFORMATION_SCHEMA each hold every view under its lower- and upper-case name. */
const spellings = (view: string): string[] =>
  ['information_schema', 'INFORMATION_SCHEMA'].flatMap((schema) => [`${schema}.${view}`, `${schema}.${view.toUpperCase()}`]);

/** The substitute of each catalogue table, by the name the engine prints (`system.tables`). */
export type InterfaceCatalogue = ReadonlyMap<string, string>;

const catalogues = new WeakMap<object, Promise<InterfaceCatalogue>>();

/**
 * The substitutes, written once per engine (`key`) from the engine's own columns of the three
 * system tables and of information_schema's other views (DESCRIBE and EXISTS read no rows, so the
 * session's row filters do not matter to them).
 */
export function interfaceCatalogue(key: object, session: ReadonlySession): Promise<InterfaceCatalogue> {
  let catalogue = catalogues.get(key);
  if (!catalogue) {
    catalogue = (async () => {
      const substitutes = new Map<string, string>();
      for (const table of SYSTEM_TABLES) {
        const columns = jsonLines<{ name: string; type: string }>(await session.run(`DESCRIBE TABLE ${table}`, 'JSONEachRow'));
        substitutes.set(table, systemSubstitute(table, columns));
      }
      const views: Record<string, string> = schemaSubstitutes(substitutes);
      for (const [view, definition] of Object.entries(OTHER_SCHEMA_VIEWS)) {
        // A server older than the view (character_sets, collations and engines are recent) has none:
        // the view is then left out, and refused as any table the credential cannot read.
        const [exists] = jsonLines<{ result: number }>(await session.run(`EXISTS TABLE information_schema.${view}`, 'JSONEachRow'));
        if (Number(exists?.result) !== 1) continue;
        const columns = jsonLines<{ name: string; type: string }>(
          await session.run(`DESCRIBE TABLE information_schema.${view}`, 'JSONEachRow'),
        );
        views[view] = otherViewSubstitute(definition, columns, substitutes);
      }
      for (const [view, substitute] of Object.entries(views)) for (const name of spellings(view)) substitutes.set(name, substitute);
      return substitutes;
    })();
    catalogues.set(key, catalogue);
    catalogue.catch(() => catalogues.delete(key));
  }
  return catalogue;
}

/** A column name as SQL: the engine's names of its system tables are plain identifiers, checked so. */
function identifier(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`the engine's column name ${JSON.stringify(name)} is not a plain identifier`);
  return `\`${name}\``;
}

/** A type name as a string literal for defaultValueOfTypeName: the engine's own type names, quotes escaped. */
const typeLiteral = (type: string) => `'${type.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** NULL where the type allows it (a server's own answer for "unknown"), else the type's empty value. */
const emptyOf = (type: string) =>
  type.startsWith('Nullable(') ? `CAST(NULL, ${typeLiteral(type)})` : `defaultValueOfTypeName(${typeLiteral(type)})`;

function systemSubstitute(table: SystemTable, columns: { name: string; type: string }[]): string {
  const shown = DEFINITION_COLUMNS[table];
  const list = columns.map(({ name, type }) => (shown.has(name) ? identifier(name) : `${emptyOf(type)} AS ${identifier(name)}`));
  return `SELECT ${list.join(', ')} FROM ${table}`;
}

/**
 * One of OTHER_SCHEMA_VIEWS in the engine's columns (`columns`, its DESCRIBE), each cast to the
 * engine's type: the given value, else (an upper-case column) its lower-case twin, else empty.
 * The values are the service's own text; the names and types are the engine's, checked so.
 */
function otherViewSubstitute(
  definition: (typeof OTHER_SCHEMA_VIEWS)[string],
  columns: { name: string; type: string }[],
  system: ReadonlyMap<string, string>,
): string {
  const names = new Set(columns.map((column) => column.name));
  const list = columns.map(({ name, type }) => {
    const twin = name.toLowerCase();
    const value = definition.values[name] ?? (twin !== name && names.has(twin) ? identifier(twin) : undefined);
    return `${value === undefined ? emptyOf(type) : `CAST(${value}, ${typeLiteral(type)})`} AS ${identifier(name)}`;
  });
  const source =
    definition.from === undefined ? '' : ` FROM ${system.has(definition.from) ? `(${system.get(definition.from)})` : definition.from}`;
  return `SELECT ${list.join(', ')}${source}${definition.where === undefined ? '' : ` WHERE ${definition.where}`}`;
}

/** `(expression) AS name` pairs, each also under its upper-case name, as the engine's views answer both. */
function bothCases(pairs: [string, string][]): string {
  const lower = pairs.map(([name, value]) => `${value} AS ${name}`);
  const upper = pairs.map(([name]) => `${name} AS ${name.toUpperCase()}`);
  return [...lower, ...upper].join(', ');
}

/**
 * information_schema's four views, in the columns and types of the engine's own (ClickHouse's
 * documentation of information_schema), over the substitutes of the system tables: the sizes a
 * server takes from every project's parts are NULL, and views has no rows, since no table the
 * tenant reads is a view.
 */
function schemaSubstitutes(system: ReadonlyMap<string, string>): Record<(typeof SCHEMA_VIEWS)[number], string> {
  const from = (table: SystemTable) => `(${system.get(table)})`;
  const nullString = "CAST(NULL, 'Nullable(String)')";
  const nullNumber = "CAST(NULL, 'Nullable(UInt64)')";
  const schemata = bothCases([
    ['catalog_name', 'name'],
    ['schema_name', 'name'],
    ['schema_owner', "'default'"],
    ['default_character_set_catalog', nullString],
    ['default_character_set_schema', nullString],
    ['default_character_set_name', nullString],
    ['sql_path', nullString],
  ]);
  const tables = bothCases([
    ['table_catalog', 'database'],
    ['table_schema', 'database'],
    ['table_name', 'name'],
    [
      'table_type',
      "multiIf(is_temporary = 1, 'LOCAL TEMPORARY', engine LIKE '%View', 'VIEW', engine LIKE 'System%', 'SYSTEM VIEW', has_own_data = 0, 'FOREIGN TABLE', 'BASE TABLE')",
    ],
    ['table_rows', nullNumber],
    ['data_length', nullNumber],
    ['index_length', nullNumber],
    ['table_collation', "CAST('utf8mb4_0900_ai_ci', 'Nullable(String)')"],
    ['table_comment', "CAST(comment, 'Nullable(String)')"],
  ]);
  const columns = bothCases([
    ['table_catalog', 'database'],
    ['table_schema', 'database'],
    ['table_name', '`table`'],
    ['column_name', 'name'],
    ['ordinal_position', 'position'],
    ['column_default', 'default_expression'],
    ['is_nullable', "if(type LIKE 'Nullable(%)', 'YES', 'NO')"],
    ['data_type', 'type'],
    ['character_maximum_length', 'character_octet_length'],
    ['character_octet_length', 'character_octet_length'],
    ['numeric_precision', 'numeric_precision'],
    ['numeric_precision_radix', 'numeric_precision_radix'],
    ['numeric_scale', 'numeric_scale'],
    ['datetime_precision', 'datetime_precision'],
    ['character_set_catalog', nullString],
    ['character_set_schema', nullString],
    ['character_set_name', nullString],
    ['collation_catalog', nullString],
    ['collation_schema', nullString],
    ['collation_name', nullString],
    ['domain_catalog', nullString],
    ['domain_schema', nullString],
    ['domain_name', nullString],
    [
      'extra',
      "CAST(multiIf(default_kind = 'DEFAULT', 'DEFAULT_GENERATED', default_kind = 'MATERIALIZED', 'STORED GENERATED', default_kind = 'ALIAS', 'VIRTUAL GENERATED', ''), 'Nullable(String)')",
    ],
    ['column_comment', 'comment'],
    ['column_type', 'type'],
  ]);
  const yesNo = "CAST(0, 'Enum8(\\'NO\\' = 0, \\'YES\\' = 1)')";
  const views = bothCases([
    ['table_catalog', 'database'],
    ['table_schema', 'database'],
    ['table_name', 'name'],
    ['view_definition', 'as_select'],
    ['check_option', "'NONE'"],
    ['is_updatable', yesNo],
    ['is_insertable_into', yesNo],
    ['is_trigger_updatable', yesNo],
    ['is_trigger_deletable', yesNo],
    ['is_trigger_insertable_into', yesNo],
  ]);
  // The inner names are renamed by the outer list; the aliases are written into a subquery of their own
  // so that, e.g., `name` in tables' WHERE is the system column, not an alias.
  return {
    schemata: `SELECT ${schemata} FROM ${from('system.databases')}`,
    tables: `SELECT ${tables} FROM ${from('system.tables')}`,
    columns: `SELECT ${columns} FROM ${from('system.columns')}`,
    views: `SELECT ${views} FROM ${from('system.tables')} WHERE engine LIKE '%View'`,
  };
}

/**
 * The engine's print of a SELECT with each read of a catalogue table replaced by its substitute,
 * as `(substitute) AS <table>` (or under the query's own alias). The print is cut into tokens,
 * quoted strings and names kept whole; `named` is how many reads of catalogue tables the parse
 * tree shows, and the replacements must equal it, or the statement is refused rather than run
 * partly unreplaced. A column qualified with the table's full name (`system.tables.name`, as
 * clickhouse-jdbc writes it even beside an alias) is rewritten to the substitute's alias.
 */
export function withCatalogue(print: string, named: number, catalogue: InterfaceCatalogue): string {
  if (named === 0) return print;
  const tokens = tokensOf(print);
  /** The catalogue name that starts at token `i` (`system` `.` `tables`), if any. */
  const nameAt = (i: number): string | undefined => {
    const [first, dot, second] = [tokens[i], tokens[i + 1], tokens[i + 2]];
    if (first?.kind !== 'word' || dot?.text !== '.' || second?.kind !== 'word' || tokens[i - 1]?.text === '.') return undefined;
    const name = `${first.text}.${second.text}`;
    return catalogue.has(name) ? name : undefined;
  };
  const aliases = new Map<string, string>();
  for (let i = 0; i < tokens.length; i += 1) {
    const name = nameAt(i);
    const alias = tokens[i + 6]; // system . tables ␠ AS ␠ alias
    if (name && tokens[i + 3]?.text === ' ' && tokens[i + 4]?.text === 'AS' && alias && !aliases.has(name)) aliases.set(name, alias.text);
  }
  let text = '';
  let replaced = 0;
  for (let i = 0; i < tokens.length; i += 1) {
    const name = nameAt(i);
    if (!name) {
      text += tokens[i]?.text ?? '';
      continue;
    }
    const bare = tokens[i + 2]?.text ?? '';
    if (tokens[i + 3]?.text === '.') {
      text += aliases.get(name) ?? bare; // a qualified column: the substitute's alias, then `.column` as printed
    } else {
      const aliased = tokens[i + 3]?.text === ' ' && tokens[i + 4]?.text === 'AS';
      text += `(${catalogue.get(name)})${aliased ? '' : ` AS ${bare}`}`;
      replaced += 1;
    }
    i += 2;
  }
  if (replaced !== named) {
    throw new ReadonlyQueryRefused('the catalogue tables are answered here only when read by their plain names', 48);
  }
  return text;
}

type Token = { kind: 'quoted' | 'word' | 'other'; text: string };

/** `print` as quoted strings and names (whole), words, and single other characters. */
function tokensOf(print: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < print.length) {
    const char = print[at] as string;
    let end = at + 1;
    if (char === "'" || char === '`' || char === '"') {
      while (end < print.length && print[end] !== char) end += print[end] === '\\' ? 2 : 1;
      tokens.push({ kind: 'quoted', text: print.slice(at, end + 1) });
      at = end + 1;
      continue;
    }
    if (/\w/.test(char)) {
      while (end < print.length && /\w/.test(print[end] as string)) end += 1;
      tokens.push({ kind: 'word', text: print.slice(at, end) });
    } else tokens.push({ kind: 'other', text: char });
    at = end;
  }
  return tokens;
}
