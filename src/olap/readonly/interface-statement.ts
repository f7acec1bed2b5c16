import { type InterfaceCatalogue, withCatalogue } from './interface-catalogue.js';
import { jsonLines, type PreparedStatement, ReadonlyQueryRefused } from './readonly-query.js';
import type { ReadonlySession } from './readonly-session.js';
import { INTROSPECTION_TABLES, TENANT_TABLES } from './tenant-guard.js';

/*
 * What the ClickHouse interface (docs/clickhouse-interface.md) runs for one statement, judged on
 * the engine's own print of it (formatQuerySingleLine) and its parse tree (EXPLAIN AST), never on
 * the request text:
 * - a SELECT, with its FORMAT clause taken off (the format is given to the engine instead), its
 *   reads of the catalogue (system.tables, information_schema.columns, …) answered by the
 *   service's substitutes (interface-catalogue.ts), then checked like every tenant query;
 * - SHOW DATABASES and SHOW TABLES, as the SELECTs over the filtered system tables ClickHouse
 *   itself turns them into (SHOW TABLES FROM information_schema: the catalogue's views);
 * - DESCRIBE TABLE of a readable table, as a DESCRIBE the service writes from its own names;
 * - EXISTS TABLE, answered 1 for a readable table and 0 for any other name, so a name the tenant
 *   cannot read is indistinguishable from one that does not exist;
 * - SHOW CREATE TABLE of a tenant table, from its create_table_query (the catalogue's column).
 * Anything else is refused with the code a read-only server gives.
 */

const UNKNOWN_FORMAT = 73;
const UNKNOWN_TABLE = 60;
const UNKNOWN_DATABASE = 81;
const READONLY = 164;
const ACCESS_DENIED = 497;
const NOT_IMPLEMENTED = 48;

/** Statement kinds (their parse tree's root) that change something: READONLY, as a read-only server answers. */
const WRITE_KINDS =
  /^(Insert|Create|Drop|Alter|Rename|Truncate|Optimize|System|Kill|Set|Grant|Revoke|Attach|Detach|Backup|Undrop|Delete|Update|Use|Move|Transaction|Check|Exchange)/;

/**
 * The query parameter that carries the credential's username (a value the service owns) into the
 * statements that ask for it: currentUser() and its aliases, SHOW GRANTS.
 */
export const CURRENT_USER_PARAM = 'ch_interface_current_user';

/** What kind of statement the interface runs (its log line names it: api/clickhouse/ch-request-log.ts). */
export type InterfaceStatementKind = 'select' | 'show' | 'describe' | 'exists' | 'show_create' | 'grants';

/** A prepared statement of the interface, with its kind. */
export type InterfaceStatement = PreparedStatement & { kind: InterfaceStatementKind };

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
  /** The credential's username, which currentUser() answers (bound as CURRENT_USER_PARAM). */
  user: string,
  /** The substitutes of the catalogue tables (interface-catalogue.ts). */
  catalogue: InterfaceCatalogue,
): Promise<InterfaceStatement> {
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
    case 'SelectWithUnionQuery': {
      const named = ast.filter((node) => node.kind === 'TableIdentifier' && catalogue.has(withoutAlias(node.name))).length;
      return { select: withCatalogue(await withCredentialUser(text, ast, session), named, catalogue), format, kind: 'select' };
    }
    case 'ShowCreateTableQuery': {
      const parts = ast.filter((node) => node.depth === 1 && node.kind === 'Identifier' && node !== (text === single ? undefined : last));
      const name = parts.map((node) => node.name).join('.');
      const table = readable(name);
      if (!table)
        throw new ReadonlyQueryRefused(`Table ${name.includes('.') ? name : `${database}.${name}`} does not exist`, UNKNOWN_TABLE);
      const bare = table.slice(database.length + 1);
      // The names are the service's own (TENANT_TABLES and the session's database), not request text.
      return {
        select: `SELECT formatQuery(create_table_query) AS statement FROM system.tables WHERE database = currentDatabase() AND name = '${bare}'`,
        format,
        kind: 'show_create',
      };
    }
    case 'ShowGrantsQuery': {
      // The credential's own grants, as a server lists them; another user's need SHOW USERS.
      const target = /^SHOW GRANTS FOR (.+)$/.exec(text)?.[1];
      if (target !== undefined && target !== backQuoted(user) && target !== user) throw showUsersDenied(user);
      return { select: grantsOf(TENANT_TABLES, database), format, kind: 'grants' };
    }
    case 'ShowTables': {
      if (text === 'SHOW DATABASES') return { select: 'SELECT name FROM system.databases ORDER BY name', format, kind: 'show' };
      if (text === 'SHOW TABLES' || text === `SHOW TABLES FROM ${database}`)
        return { select: 'SELECT name FROM system.tables WHERE database = currentDatabase() ORDER BY name', format, kind: 'show' };
      const from = /^SHOW TABLES FROM (\S+)$/.exec(text)?.[1];
      if (from === 'information_schema' || from === 'INFORMATION_SCHEMA') {
        // Its views, as the catalogue answers them; the names are the service's own (interface-catalogue.ts).
        const views = [...catalogue.keys()].filter((name) => name.startsWith(`${from}.`)).map((name) => `'${name.slice(from.length + 1)}'`);
        return { select: `SELECT arrayJoin([${views.join(', ')}]) AS name ORDER BY name`, format, kind: 'show' };
      }
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
      const substitute =
        table === undefined || (!table.startsWith('INFORMATION_SCHEMA.') && !table.startsWith('information_schema.'))
          ? undefined
          : catalogue.get(table);
      if (simple && substitute) return { direct: `DESCRIBE TABLE (${substitute})`, format, kind: 'describe' };
      if (!simple || name === undefined) {
        throw new ReadonlyQueryRefused(`Table ${table ?? '(a subquery)'} does not exist`, UNKNOWN_TABLE);
      }
      return { direct: `DESCRIBE TABLE ${name}`, format, kind: 'describe' };
    }
    case 'ExistsTableQuery': {
      const parts = ast.filter((node) => node.depth === 1 && node.kind === 'Identifier' && node !== (text === single ? undefined : last));
      const name = parts.map((node) => node.name).join('.');
      const known = readable(name) || introspection(name) || catalogue.has(name);
      return { select: `SELECT toUInt8(${known ? 1 : 0}) AS result`, format, kind: 'exists' };
    }
    case 'SHOW': {
      // SHOW CURRENT ROLES / SHOW ENABLED ROLES: a credential has no roles, so no rows, in the server's columns.
      if (/^(CURRENT|ENABLED) ROLES query$/.test(root.name)) {
        return {
          select: "SELECT '' AS role_name, toUInt8(0) AS with_admin_option, toUInt8(0) AS is_default LIMIT 0",
          format,
          kind: 'grants',
        };
      }
      // SHOW USERS, ROLES, QUOTAS, PROFILES, POLICIES, SHOW CREATE USER…: refused as a server refuses a user without the grant.
      throw showUsersDenied(user, accessGrantOf(root.name));
    }
    case 'ShowAccessQuery':
      throw showUsersDenied(user, 'SHOW ACCESS');
    default:
      if (WRITE_KINDS.test(root.kind)) throw new ReadonlyQueryRefused(`Cannot execute query in readonly mode (${root.kind})`, READONLY);
      throw new ReadonlyQueryRefused(
        `Not enough privileges: only SELECT, SHOW DATABASES, SHOW TABLES, SHOW CREATE TABLE, DESCRIBE TABLE and EXISTS TABLE are allowed here (${root.kind})`,
        ACCESS_DENIED,
      );
  }
}

/** `system.tables (alias t)` → `system.tables`. */
const withoutAlias = (name: string) => name.replace(/ \(alias .*$/, '');

const introspection = (name: string) => ((INTROSPECTION_TABLES as readonly string[]).includes(name) ? name : undefined);

/** ClickHouse's refusal of access introspection to a user without the grant (SHOW USERS, SHOW ROLES, …). */
const showUsersDenied = (user: string, grant = 'SHOW USERS') =>
  new ReadonlyQueryRefused(
    `${user}: Not enough privileges. To execute this query, it's necessary to have the grant ${grant} ON *.*`,
    ACCESS_DENIED,
  );

/** The grant a server asks for a SHOW of access entities, by the parse tree's name of the statement (`ROLES query`). */
function accessGrantOf(statement: string): string {
  if (/ROLE/.test(statement)) return 'SHOW ROLES';
  if (/QUOTA/.test(statement)) return 'SHOW QUOTAS';
  if (/PROFILE/.test(statement)) return 'SHOW SETTINGS PROFILES';
  if (/POLIC/.test(statement)) return 'SHOW ROW POLICIES';
  return 'SHOW USERS';
}

/** A name as ClickHouse prints a user that is not a plain identifier (a credential's is a UUID). */
const backQuoted = (name: string) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `\`${name.replace(/[`\\]/g, '\\$&')}\``);

/**
 * SHOW GRANTS of the credential, one row per readable table, in the server's column `GRANTS`:
 * `GRANT SELECT ON <db>.<table> TO <user>`, the user bound as a parameter, the rest the service's names.
 */
function grantsOf(tables: readonly string[], database: string): string {
  const list = tables.map((table) => `'${database}.${table}'`).join(', ');
  return (
    `SELECT concat('GRANT SELECT ON ', t, ' TO ', if(match({${CURRENT_USER_PARAM}:String}, '^[A-Za-z_][A-Za-z0-9_]*$'), ` +
    `{${CURRENT_USER_PARAM}:String}, concat('\`', {${CURRENT_USER_PARAM}:String}, '\`'))) AS GRANTS FROM (SELECT arrayJoin([${list}]) AS t)`
  );
}

/** currentUser() and its aliases (user, current_user, session_user; case-insensitive except currentUser). */
const isUserFunction = (name: string) => name === 'currentUser' || /^(user|current_user|session_user)$/i.test(name);

/**
 * The engine's print of a SELECT with each call of currentUser() (or an alias) replaced by the
 * credential's username: a query parameter, under the call's own column name (`currentUser()`),
 * so the answer reads as a server's. The print is walked token by token (userCalls), skipping
 * quoted strings and names; the number of calls replaced must equal the parse tree's, or the
 * statement is refused rather than answered with the engine's user. A bare name (`SELECT
 * currentUser`, which the engine resolves to the function when no column has that name) is
 * replaced only when the engine's resolution shows exactly as many calls as bare names.
 */
async function withCredentialUser(print: string, ast: Node[], session: ReadonlySession): Promise<string> {
  const calls = ast.filter((node) => node.kind === 'Function' && isUserFunction(node.name.split(' ')[0] ?? '')).length;
  const first = userCalls(print, false);
  if (first.replaced !== calls) {
    throw new ReadonlyQueryRefused('currentUser() is answered here only as a plain call: write currentUser()', NOT_IMPLEMENTED);
  }
  if (first.bare === 0) return first.text;
  const resolved = async (text: string) =>
    jsonLines<{ explain: string }>(await session.run(`EXPLAIN QUERY TREE ${text}`, 'JSONEachRow')).filter((row) =>
      /function_name: currentUser\b/.test(row.explain),
    ).length;
  const left = await resolved(first.text);
  if (left === 0) return first.text; // the bare names are columns
  const second = userCalls(print, true);
  if (second.bare !== 0 || second.replaced - first.replaced !== left || (await resolved(second.text)) !== 0) {
    throw new ReadonlyQueryRefused('currentUser without parentheses is not answered here: write currentUser()', NOT_IMPLEMENTED);
  }
  return second.text;
}

/** `print` with the calls of currentUser() and its aliases (and, with `bareToo`, their bare names) replaced. */
function userCalls(print: string, bareToo: boolean): { text: string; replaced: number; bare: number } {
  let text = '';
  let replaced = 0;
  let bare = 0;
  let at = 0;
  while (at < print.length) {
    const char = print[at] as string;
    if (char === "'" || char === '`' || char === '"') {
      let end = at + 1;
      while (end < print.length && print[end] !== char) end += print[end] === '\\' ? 2 : 1;
      text += print.slice(at, end + 1);
      at = end + 1;
      continue;
    }
    if (!/\w/.test(char)) {
      text += char;
      at += 1;
      continue;
    }
    let end = at;
    while (end < print.length && /\w/.test(print[end] as string)) end += 1;
    const word = print.slice(at, end);
    const named = /^\d/.test(word) || text.endsWith('.') || print[end] === '.' || print[end] === ':' || /\bAS $/.test(text);
    if (!named && isUserFunction(word) && print.startsWith('()', end)) {
      text += `({${CURRENT_USER_PARAM}:String} AS \`${word}()\`)`;
      replaced += 1;
      at = end + 2;
      continue;
    }
    if (!named && isUserFunction(word) && print[end] !== '(') {
      if (bareToo) {
        text += `({${CURRENT_USER_PARAM}:String} AS \`${word}\`)`;
        replaced += 1;
        at = end;
        continue;
      }
      bare += 1;
    }
    text += word;
    at = end;
  }
  return { text, replaced, bare };
}
