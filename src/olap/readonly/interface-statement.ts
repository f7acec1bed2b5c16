import { jsonLines, type PreparedStatement, ReadonlyQueryRefused } from './readonly-query.js';
import type { ReadonlySession } from './readonly-session.js';
import { INTROSPECTION_TABLES, TENANT_TABLES } from './tenant-guard.js';

/*
 * What the ClickHouse interface (docs/clickhouse-interface.md) runs for one statement, judged on
 * the engine's own print of it (formatQuerySingleLine) and its parse tree (EXPLAIN AST), never on
 * the request text:
 * - a SELECT, with its FORMAT clause taken off (the format is given to the engine instead), then
 *   checked like every tenant query;
 * - SHOW DATABASES and SHOW TABLES, as the SELECTs over the filtered system tables ClickHouse
 *   itself turns them into;
 * - DESCRIBE TABLE of a readable table, as a DESCRIBE the service writes from its own names;
 * - EXISTS TABLE, answered 1 for a readable table and 0 for any other name, so a name the tenant
 *   cannot read is indistinguishable from one that does not exist.
 * Anything else is refused with the code a read-only server gives.
 */

const UNKNOWN_FORMAT = 73;
const UNKNOWN_TABLE = 60;
const UNKNOWN_DATABASE = 81;
const READONLY = 164;
const ACCESS_DENIED = 497;

/** Statement kinds (their parse tree's root) that change something: READONLY, as a read-only server answers. */
const WRITE_KINDS =
  /^(Insert|Create|Drop|Alter|Rename|Truncate|Optimize|System|Kill|Set|Grant|Revoke|Attach|Detach|Backup|Undrop|Delete|Update|Use|Move|Transaction|Check|Exchange)/;

/** Output formats of the engine, by name and (for those ClickHouse matches so) by lower-case name. */
export type OutputFormats = ReadonlyMap<string, string>;

const formatLists = new WeakMap<object, Promise<OutputFormats>>();

/** The engine's output formats, asked once per engine (`key`). */
export function outputFormats(key: object, session: ReadonlySession): Promise<OutputFormats> {
  let list = formatLists.get(key);
  if (!list) {
    list = session.run('SELECT name FROM system.formats WHERE is_output', 'JSONEachRow').then((out) => {
      const names = new Map<string, string>();
      const all = jsonLines<{ name: string }>(out).map((row) => row.name);
      // Exact names first; a name in another letter case finds the format only when it is unambiguous.
      for (const name of all) if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
      for (const name of all) names.set(name, name);
      return names;
    });
    formatLists.set(key, list);
    list.catch(() => formatLists.delete(key));
  }
  return list;
}

/** The canonical name of an output format; UNKNOWN_FORMAT otherwise. */
export function outputFormat(formats: OutputFormats, name: string): string {
  const known = formats.get(name) ?? formats.get(name.toLowerCase());
  if (!known) throw new ReadonlyQueryRefused(`Unknown output format ${name}`, UNKNOWN_FORMAT);
  return known;
}

type Node = { depth: number; kind: string; name: string };

function nodes(rows: string[]): Node[] {
  return rows
    .filter((row) => row.trim() !== '')
    .map((row) => {
      const depth = row.length - row.trimStart().length;
      const text = row.trimStart();
      const space = text.indexOf(' ');
      const kind = space < 0 ? text : text.slice(0, space);
      const name = (space < 0 ? '' : text.slice(space + 1)).replace(/ \(children \d+\)$/, '').trim();
      return { depth, kind, name };
    });
}

/**
 * Prepares `single` (the engine's print of the one statement sent) for the interface: `database`
 * is the service's database, `defaultFormat` the request's (default_format, X-ClickHouse-Format,
 * else TabSeparated), `formats` the engine's output formats.
 */
export async function prepareInterfaceStatement(
  single: string,
  session: ReadonlySession,
  database: string,
  defaultFormat: string,
  formats: OutputFormats,
): Promise<PreparedStatement> {
  const ast = nodes(jsonLines<{ explain: string }>(await session.run(`EXPLAIN AST ${single}`, 'JSONEachRow')).map((row) => row.explain));
  const root = ast[0];
  if (!root) throw new ReadonlyQueryRefused('Empty query', 62);
  // A FORMAT clause is the root's last child, an identifier, printed last as ` FORMAT <name>`.
  const children = ast.filter((node) => node.depth === 1);
  const last = children[children.length - 1];
  let text = single;
  let format = defaultFormat;
  if (last?.kind === 'Identifier' && single.endsWith(` FORMAT ${last.name}`)) {
    text = single.slice(0, -` FORMAT ${last.name}`.length);
    format = last.name;
  }
  format = outputFormat(formats, format);
  const readable = (name: string) => {
    const bare = name.startsWith(`${database}.`) ? name.slice(database.length + 1) : name;
    return (TENANT_TABLES as readonly string[]).includes(bare) ? `${database}.${bare}` : undefined;
  };

  switch (root.kind) {
    case 'SelectWithUnionQuery':
      return { select: text, format };
    case 'ShowTables': {
      if (text === 'SHOW DATABASES') return { select: 'SELECT name FROM system.databases ORDER BY name', format };
      if (text === 'SHOW TABLES' || text === `SHOW TABLES FROM ${database}`)
        return { select: 'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name', format };
      const from = /^SHOW TABLES FROM (\S+)$/.exec(text)?.[1];
      if (from) throw new ReadonlyQueryRefused(`Database ${from} does not exist`, UNKNOWN_DATABASE);
      throw new ReadonlyQueryRefused(
        'Not enough privileges: of the SHOW queries, only SHOW DATABASES and SHOW TABLES are allowed here',
        ACCESS_DENIED,
      );
    }
    case 'DescribeQuery': {
      const table = ast.find((node) => node.kind === 'TableIdentifier' && node.depth === 2)?.name;
      const simple = ast.length === 3 + (text === single ? 0 : 1);
      const name = table === undefined ? undefined : (readable(table) ?? introspection(table));
      if (!simple || name === undefined) {
        throw new ReadonlyQueryRefused(`Table ${table ?? '(a subquery)'} does not exist`, UNKNOWN_TABLE);
      }
      return { direct: `DESCRIBE TABLE ${name}`, format };
    }
    case 'ExistsTableQuery': {
      const parts = ast.filter((node) => node.depth === 1 && node.kind === 'Identifier' && node !== (text === single ? undefined : last));
      const name = parts.map((node) => node.name).join('.');
      return { select: `SELECT toUInt8(${readable(name) || introspection(name) ? 1 : 0}) AS result`, format };
    }
    default:
      if (WRITE_KINDS.test(root.kind)) throw new ReadonlyQueryRefused(`Cannot execute query in readonly mode (${root.kind})`, READONLY);
      throw new ReadonlyQueryRefused(
        `Not enough privileges: only SELECT, SHOW DATABASES, SHOW TABLES, DESCRIBE TABLE and EXISTS TABLE are allowed here (${root.kind})`,
        ACCESS_DENIED,
      );
  }
}

const introspection = (name: string) => ((INTROSPECTION_TABLES as readonly string[]).includes(name) ? name : undefined);
