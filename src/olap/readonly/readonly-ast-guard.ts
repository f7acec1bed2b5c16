/**
 * The part of the read-only guarantee that ClickHouse's own settings do not give on chDB
 * (docs/sql-safety.md): a check of the statement's parse tree, as ClickHouse's parser printed it
 * (`EXPLAIN AST`, one row per node, the node kind first). Never a match over the query text.
 *
 * Measured on chDB 3.4.0 (libchdb 26.7) with the session at `readonly = 1`:
 * - a subquery's `SETTINGS readonly = 0` (or any other setting) is applied without the readonly
 *   check, so `Set` nodes are refused anywhere in the tree;
 * - the scalar function `file(path)` reads any file of the machine (clickhouse-local has no
 *   user_files_path restriction), and `getServerSetting` discloses server paths;
 * - `INTO OUTFILE` is executed by chDB's client layer and writes a file even under readonly
 *   (the statement is only ever run inside a subquery, where it is a syntax error; the node
 *   allow-list refuses it too).
 * Table functions that reach files, the network or processes are refused by `readonly = 1` itself;
 * they are refused here as well, so a server without a restricted profile is covered the same way.
 */

/** Parse-tree node kinds of a plain SELECT; anything else (Set, Explain, InsertQuery, …) is refused. */
const ALLOWED_NODES = new Set([
  'SelectWithUnionQuery',
  'SelectIntersectExceptQuery',
  'SelectQuery',
  'ExpressionList',
  'Function',
  'Lambda',
  'Identifier',
  'Literal',
  'QueryParameter',
  'Subquery',
  'WithElement',
  'TablesInSelectQuery',
  'TablesInSelectQueryElement',
  'TableExpression',
  'TableIdentifier',
  'TableJoin',
  'ArrayJoin',
  'SampleRatio',
  'OrderByElement',
  'Interpolate',
  'InterpolateElement',
  'WindowDefinition',
  'WindowListElement',
  'Asterisk',
  'QualifiedAsterisk',
  'ColumnsRegexpMatcher',
  'QualifiedColumnsRegexpMatcher',
  'ColumnsListMatcher',
  'QualifiedColumnsListMatcher',
  'ColumnsTransformerList',
  'ColumnsApplyTransformer',
  'ColumnsExceptTransformer',
  'ColumnsReplaceTransformer',
  'ColumnsReplaceTransformerReplacement',
  'DataType',
  'NameTypePair',
]);

/**
 * Table functions that only generate rows or read what a SELECT could read anyway. Every other
 * table function (file, url, s3, remote, cluster, executable, postgresql, mysql, jdbc, odbc,
 * dictionary, filesystem, …) is refused, in FROM and wherever else its name appears as a function.
 */
const SAFE_TABLE_FUNCTIONS = new Set([
  'numbers',
  'numbers_mt',
  'zeros',
  'zeros_mt',
  'generate_series',
  'generateseries',
  'primes',
  'values',
  'generaterandom',
  'null',
  'view',
  'merge',
]);

/**
 * Ordinary functions that reach outside the query's tables: files, dictionaries (whose sources may
 * be files, URLs or other databases), models on disk, server configuration, the coordination
 * service. Names in lower case; ClickHouse function names are matched case-insensitively here.
 */
const DENIED_FUNCTIONS = new Set([
  'file',
  'catboostevaluate',
  'getserversetting',
  'getclienthttpheader',
  'filesystemavailable',
  'filesystemcapacity',
  'filesystemunreserved',
  'generateserialid',
  'zookeepersessionuptime',
]);

/** Table functions known without asking the engine (its own list is added at run time). */
export const KNOWN_TABLE_FUNCTIONS = [
  'file',
  'filecluster',
  'url',
  'urlcluster',
  's3',
  's3cluster',
  'gcs',
  'oss',
  'cosn',
  'hdfs',
  'hdfscluster',
  'azureblobstorage',
  'azureblobstoragecluster',
  'remote',
  'remotesecure',
  'cluster',
  'clusterallreplicas',
  'executable',
  'postgresql',
  'mysql',
  'jdbc',
  'odbc',
  'mongodb',
  'redis',
  'sqlite',
  'dictionary',
  'filesystem',
  'input',
  'format',
  'iceberg',
  'deltalake',
  'hudi',
  'paimon',
  'eval',
  'loop',
  'fuzzjson',
  'fuzzquery',
];

/**
 * A judgement of a statement. A refusal may carry the ClickHouse error code a server would answer
 * with for it (the ClickHouse interface answers it; the JSON routes answer a 400 either way):
 * 164 READONLY for what changes something, 497 ACCESS_DENIED for what may not be read.
 */
export type AstVerdict = { ok: true } | { ok: false; reason: string; code?: number };

/** ClickHouse's codes of the refusals (src/Common/ErrorCodes.cpp). */
export const READONLY = 164;
export const ACCESS_DENIED = 497;

/**
 * Judges the `EXPLAIN AST` rows of one statement: a single SELECT (no FORMAT, INTO OUTFILE or
 * SETTINGS), whose table functions are harmless generators and whose functions do not reach
 * files, dictionaries or the server's configuration. `tableFunctions` is the engine's own list
 * (system.table_functions), in lower case.
 */
export function judgeAst(rows: string[], tableFunctions: ReadonlySet<string>): AstVerdict {
  const nodes = rows.filter((row) => row.trim() !== '').map(parseNode);
  const root = nodes[0];
  if (root?.depth !== 0 || root.kind !== 'SelectWithUnionQuery' || nodes.some((n, i) => i > 0 && n.depth === 0)) {
    return { ok: false, reason: 'only a SELECT query is allowed', code: READONLY };
  }
  // A top-level FORMAT or INTO OUTFILE hangs off the root beside its ExpressionList.
  if (nodes.filter((n) => n.depth === 1).length !== 1) {
    return { ok: false, reason: 'FORMAT and INTO OUTFILE clauses are not allowed', code: READONLY };
  }
  const parents: Node[] = [];
  for (const node of nodes) {
    parents.length = node.depth;
    const parent = parents[node.depth - 1];
    parents[node.depth] = node;
    if (node.kind === 'Set') return { ok: false, reason: 'queries may not change settings (SETTINGS clauses are refused)', code: READONLY };
    if (!ALLOWED_NODES.has(node.kind)) return { ok: false, reason: `${node.kind} is not allowed in a read-only query`, code: READONLY };
    if (node.kind !== 'Function') continue;
    const name = node.name.toLowerCase();
    const inFrom = parent?.kind === 'TableExpression';
    if (SAFE_TABLE_FUNCTIONS.has(name)) continue;
    if (inFrom || tableFunctions.has(name))
      return { ok: false, reason: `the table function ${node.name} is not allowed`, code: ACCESS_DENIED };
    if (DENIED_FUNCTIONS.has(name) || name.startsWith('dict'))
      return { ok: false, reason: `the function ${node.name} is not allowed`, code: ACCESS_DENIED };
  }
  return { ok: true };
}

type Node = { depth: number; kind: string; name: string };

/** `   Function file (alias f) (children 1)` → depth 3, kind Function, name file. */
function parseNode(row: string): Node {
  const depth = row.length - row.trimStart().length;
  const [kind = '', name = ''] = row.trimStart().split(' ');
  return { depth, kind, name };
}
