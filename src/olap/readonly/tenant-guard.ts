import { ACCESS_DENIED, type AstVerdict } from './readonly-ast-guard.js';

/**
 * What a tenant's query (POST /projects/:id/sql) may read, checked on ClickHouse's own parse and
 * resolution of the one statement, on top of the read-only checks every query gets
 * (readonly-ast-guard.ts). Rows of another project are kept out by the engine itself
 * (additional_table_filters, tenant-filters.ts); these checks keep the query on the tables those
 * filters cover, so no read escapes them:
 * - a materialized view (`events_daily_mv`) reads its target table under the view's own name,
 *   which no filter names (measured on chDB 26.7: all projects' rows);
 * - `merge()` reads the tables it matches without their filters (measured), and `view()`,
 *   `remote()`, `cluster()`, `mergeTreeIndex()` and the like reach tables by other paths;
 * - system tables, information_schema and other databases have no project column at all.
 * The engine's parse (`EXPLAIN AST`) is checked first, so nothing outside the allowed tables is
 * ever read, not even by the resolution step; then the engine's resolution of the statement
 * (`EXPLAIN QUERY TREE`, where CTE names, aliases and `IN table` are resolved to the storages
 * they read) must name only the allowed tables.
 */

/** Tables of the service's database a tenant query may read (docs/project-sql.md). */
export const TENANT_TABLES = ['events', 'facts', 'events_daily', 'events_hourly'] as const;

/**
 * System tables the ClickHouse interface (docs/clickhouse-interface.md) also lets a tenant read, as
 * tools do on connect: the first three only through row filters that keep the service's database
 * and the tenant tables (tenant-filters.ts); the others list what the engine was built with (its
 * functions, types, collations, table engines: information_schema's collations and engines read the
 * last two) and hold no data of anyone.
 */
export const INTROSPECTION_TABLES = [
  'system.databases',
  'system.tables',
  'system.columns',
  'system.functions',
  'system.data_type_families',
  'system.collations',
  'system.table_engines',
] as const;

/**
 * Columns of those system tables that the row filters do not make the tenant's own: sizes and
 * counts over every project's rows, paths on the server's disk, the names of the materialized
 * views. A query that names one anywhere (a `*` names them all) is refused with ACCESS_DENIED,
 * as a server refuses a column its grants leave out.
 */
const HIDDEN_COLUMNS: Readonly<Record<string, ReadonlySet<string>>> = {
  'system.databases': new Set(['data_path', 'metadata_path']),
  'system.tables': new Set([
    'data_paths',
    'metadata_path',
    'total_rows',
    'total_bytes',
    'total_bytes_uncompressed',
    'parts',
    'active_parts',
    'total_marks',
    'lifetime_rows',
    'lifetime_bytes',
    'dependencies_database',
    'dependencies_table',
    'loading_dependencies_database',
    'loading_dependencies_table',
    'loading_dependent_database',
    'loading_dependent_table',
  ]),
  'system.columns': new Set(['data_compressed_bytes', 'data_uncompressed_bytes', 'marks_bytes']),
};

/** What a tenant statement may read besides the tenant tables. */
export type TenantReach = { introspection?: boolean };

/** Table functions that only generate rows; every other one is refused for tenants (view, merge too). */
const TENANT_TABLE_FUNCTIONS = new Set([
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'generate_series',
  'generateseries',
  'primes',
  'values',
  'null',
  'generaterandom',
]);

/** Table functions the operator's guard allows that reach other tables: refused wherever named. */
const TABLE_READING_FUNCTIONS = new Set(['view', 'merge']);

/** Ordinary functions that read a table or another server named by their arguments. */
const TABLE_NAMING_FUNCTIONS = new Set(['joinget', 'joingetornull', 'hascolumnintable']);

/** `in`, `notIn`, `globalIn`, `nullIn`, `globalNotNullIn`, …: their right side may name a table. */
const IN_FUNCTION = /^(global)?(not)?(null)?in(ignoreset)?$/;

/** The service's database and the tables in it, as the session sees them. */
export type TenantCatalog = { database: string; tables: readonly string[] };

type Node = { depth: number; kind: string; name: string; parent: Node | undefined; index: number };

/**
 * Judges the `EXPLAIN AST` rows of a statement that passed the read-only checks: every table it
 * names must be an allowed one, unqualified or qualified with the service's database. A name
 * without a database that is not an allowed table must be a CTE: it is refused when it names
 * any other table of the database, so a CTE name that does not resolve (another scope) reads
 * nothing. The right side of IN is a table name when it is a bare identifier.
 */
export function judgeTenantAst(rows: string[], catalog: TenantCatalog, reach: TenantReach = {}): AstVerdict {
  const existing = new Set(catalog.tables);
  const allowedName = (name: string) =>
    (TENANT_TABLES as readonly string[]).includes(name) ||
    (reach.introspection === true && (INTROSPECTION_TABLES as readonly string[]).includes(name)) ||
    TENANT_TABLES.some((table) => name === `${catalog.database}.${table}`) ||
    (!name.includes('.') && !existing.has(name));
  const stack: Node[] = [];
  for (const row of rows) {
    if (row.trim() === '') continue;
    const node = parseNode(row, stack);
    if (node.kind === 'TableIdentifier' && !allowedName(node.name)) {
      return refusedTable(node.name);
    }
    if (node.kind === 'Identifier' && isInRightSide(node) && !allowedName(node.name)) return refusedTable(node.name);
    if (node.kind !== 'Function') continue;
    const name = node.name.toLowerCase();
    if (node.parent?.kind === 'TableExpression' && !TENANT_TABLE_FUNCTIONS.has(name)) {
      return { ok: false, reason: `the table function ${node.name} is not allowed here`, code: ACCESS_DENIED };
    }
    if (TABLE_READING_FUNCTIONS.has(name) || TABLE_NAMING_FUNCTIONS.has(name)) {
      return { ok: false, reason: `the function ${node.name} is not allowed here`, code: ACCESS_DENIED };
    }
  }
  return { ok: true };
}

function refusedTable(name: string): AstVerdict {
  // The access tables are refused in a server's words to a user without the grant to see them.
  const access = ACCESS_TABLES[name];
  if (access)
    return {
      ok: false,
      reason: `Not enough privileges. To execute this query, it's necessary to have the grant ${access} ON *.*`,
      code: ACCESS_DENIED,
    };
  return { ok: false, reason: `the table ${name} is not readable here; readable: ${TENANT_TABLES.join(', ')}`, code: ACCESS_DENIED };
}

/** System tables of users, roles and grants, and the grant a server asks before it shows them. */
const ACCESS_TABLES: Record<string, string> = {
  'system.users': 'SHOW USERS',
  'system.user_directories': 'SHOW USERS',
  'system.grants': 'SHOW USERS',
  'system.roles': 'SHOW ROLES',
  'system.role_grants': 'SHOW ROLES',
  'system.quotas': 'SHOW QUOTAS',
  'system.quota_limits': 'SHOW QUOTAS',
  'system.quotas_usage': 'SHOW QUOTAS',
  'system.settings_profiles': 'SHOW SETTINGS PROFILES',
  'system.settings_profile_elements': 'SHOW SETTINGS PROFILES',
  'system.row_policies': 'SHOW ROW POLICIES',
};

/**
 * Judges `EXPLAIN QUERY TREE` rows (the analyzer's resolution): every storage read (`TABLE`) is an
 * allowed table of the service's database (or `system.one`, which a SELECT without FROM reads),
 * and every table function a generator. With `introspection`, the system tables tools read are
 * allowed too, but no column of them that HIDDEN_COLUMNS lists.
 */
export function judgeQueryTree(rows: string[], database: string, reach: TenantReach = {}): AstVerdict {
  const allowed = new Set([
    ...TENANT_TABLES.map((table) => `${database}.${table}`),
    'system.one',
    ...(reach.introspection ? INTROSPECTION_TABLES : []),
  ]);
  // The storages read, by node id, so that a column can be traced to its table.
  const tables = new Map<string, string>();
  for (const row of rows) {
    const line = row.trim();
    if (line.startsWith('TABLE id:')) {
      const table = after(line, ', table_name: ');
      if (table === undefined || !allowed.has(table)) {
        return { ok: false, reason: `the query reads ${table ?? 'a table'}, which is not readable here`, code: ACCESS_DENIED };
      }
      tables.set(nodeId(line), table);
    } else if (line.startsWith('TABLE_FUNCTION id:')) {
      const name = after(line, ', table_function_name: ');
      if (name === undefined || !TENANT_TABLE_FUNCTIONS.has(name.toLowerCase())) {
        return { ok: false, reason: `the table function ${name ?? '?'} is not allowed here`, code: ACCESS_DENIED };
      }
    }
  }
  if (!reach.introspection) return { ok: true };
  for (const row of rows) {
    const line = row.trim();
    if (!line.startsWith('COLUMN id:')) continue;
    const source = /, source_id: (\d+)$/.exec(line)?.[1];
    const table = source === undefined ? undefined : tables.get(source);
    const hidden = table === undefined ? undefined : HIDDEN_COLUMNS[table];
    if (!hidden) continue;
    const column = /^COLUMN id: \d+, column_name: (.*), result_type: /.exec(line)?.[1];
    if (column === undefined || hidden.has(column)) {
      return {
        ok: false,
        reason: `Not enough privileges: the column ${column ?? '?'} of ${table} is not readable here (it holds every project's sizes, or server paths)`,
        code: ACCESS_DENIED,
      };
    }
  }
  return { ok: true };
}

/** `TABLE id: 3, alias: __table1, table_name: system.tables` → `3`. */
const nodeId = (line: string) => /^\w+ id: (\d+)/.exec(line)?.[1] ?? '';

/** The text after the last `marker` (the node's own field comes last, after any alias). */
function after(line: string, marker: string): string | undefined {
  const at = line.lastIndexOf(marker);
  return at < 0 ? undefined : line.slice(at + marker.length);
}

/** The second argument of an IN-family function: Function in → ExpressionList → (left, right). */
function isInRightSide(node: Node): boolean {
  const list = node.parent;
  const fn = list?.parent;
  return node.index === 1 && list?.kind === 'ExpressionList' && fn?.kind === 'Function' && IN_FUNCTION.test(fn.name.toLowerCase());
}

/**
 * `      TableIdentifier default.events (alias e)` → depth 6, kind, name `default.events`, with its
 * parent and its index among the parent's children. The name is everything up to a trailing
 * ` (children …)` and a ` (alias …)`, so a quoted name with spaces is read whole.
 */
function parseNode(row: string, stack: Node[]): Node {
  const depth = row.length - row.trimStart().length;
  const text = row.trimStart();
  const space = text.indexOf(' ');
  const kind = space < 0 ? text : text.slice(0, space);
  let name = space < 0 ? '' : text.slice(space + 1).replace(/ \(children \d+\)$/, '');
  // The first ` (alias `: an alias may hold anything, and no table the service has holds this.
  const alias = name.indexOf(' (alias ');
  if (alias >= 0) name = name.slice(0, alias);
  stack.length = depth;
  const parent = depth > 0 ? stack[depth - 1] : undefined;
  const node: Node = { depth, kind, name, parent, index: parent ? childCount(parent) : 0 };
  if (parent) counts.set(parent, node.index + 1);
  stack[depth] = node;
  return node;
}

const counts = new WeakMap<Node, number>();
const childCount = (node: Node) => counts.get(node) ?? 0;
