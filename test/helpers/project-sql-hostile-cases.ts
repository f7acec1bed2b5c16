/**
 * The hostile queries of tenant SQL (docs/project-sql.md): each written to reach another
 * project's rows, or anything outside events, facts, events_daily and events_hourly. Shared by
 * the JSON route's test (test/olap/project-sql-hostile.test.ts) and the ClickHouse interface's
 * (test/olap/clickhouse-interface-hostile.test.ts). The ids are read when a query is made.
 */
export type Hostile = [label: string, query: () => string, params?: () => Record<string, string | number>];

export function hostileQueries(ids: { own: () => string; sibling: () => string; stranger: () => string }): Hostile[] {
  const F = ids.stranger;
  const S = ids.sibling;
  const own = ids.own;

  return [
    // Direct names, with filters that try to widen what is seen
    ['all events', () => 'SELECT * FROM events'],
    ['events of the stranger', () => `SELECT * FROM events WHERE project_id = '${F()}'`],
    ['events of the sibling', () => `SELECT * FROM events WHERE project_id = '${S()}'`],
    ['events not own', () => `SELECT * FROM events WHERE project_id != '${own()}'`],
    ['OR true', () => `SELECT * FROM events WHERE 1 OR project_id = '${F()}'`],
    ['facts of the stranger', () => `SELECT * FROM facts WHERE project_id = '${F()}'`],
    ['all facts', () => 'SELECT * FROM facts'],
    ['daily rollup of the stranger', () => `SELECT *, finalizeAggregation(users) FROM events_daily WHERE project_id = '${F()}'`],
    ['hourly rollup', () => 'SELECT project_id, hour, event_name, events, finalizeAggregation(users) FROM events_hourly'],
    ['project ids of events', () => 'SELECT project_id, count() FROM events GROUP BY project_id'],
    ['project id as a parameter', () => 'SELECT * FROM events WHERE project_id = {p:UUID}', () => ({ p: F() })],
    ['uniq over projects', () => 'SELECT uniqExact(project_id), groupArray(user_id) FROM events'],
    ['min and max of the sort key', () => 'SELECT min(project_id), max(project_id), min(created_at), max(created_at), count() FROM events'],
    ['properties of everyone', () => 'SELECT properties.secret, properties_raw FROM events'],
    ['old rows', () => 'SELECT * FROM events WHERE created_at < now() - INTERVAL 60 DAY'],
    // Database-qualified names
    ['default.events', () => 'SELECT * FROM default.events'],
    ['quoted default.events', () => 'SELECT * FROM `default`.`events`'],
    ['double-quoted default.facts', () => 'SELECT * FROM "default"."facts"'],
    ['default.events_daily', () => 'SELECT project_id, day, event_name, events FROM default.events_daily'],
    ['DEFAULT.events', () => 'SELECT * FROM DEFAULT.events'],
    ['currentDatabase in a name', () => 'SELECT * FROM default.events WHERE project_id IN (SELECT project_id FROM default.facts)'],
    ['one quoted name with a dot', () => 'SELECT * FROM `default.events_daily_mv`'],
    // Other tables of the database
    ['the daily view', () => 'SELECT * FROM events_daily_mv'],
    ['the hourly view', () => 'SELECT * FROM events_hourly_mv'],
    ['the daily view, qualified', () => 'SELECT * FROM default.events_daily_mv'],
    ['the hourly view, quoted', () => 'SELECT * FROM default.`events_hourly_mv`'],
    ['the view in double quotes', () => 'SELECT * FROM "events_daily_mv"'],
    ['the migrations table', () => 'SELECT * FROM schema_migrations'],
    ['a view counted', () => 'SELECT count(), groupArray(toString(project_id)) FROM events_daily_mv'],
    // System tables and information_schema
    ['system.tables', () => 'SELECT * FROM system.tables'],
    ['system.parts', () => 'SELECT * FROM system.parts'],
    ['system.columns', () => 'SELECT * FROM system.columns'],
    ['system.query_log', () => 'SELECT query FROM system.query_log'],
    ['system.processes', () => 'SELECT query FROM system.processes'],
    ['system.parts_columns', () => 'SELECT * FROM system.parts_columns'],
    ['system.databases', () => 'SELECT * FROM system.databases'],
    ['system.settings', () => 'SELECT * FROM system.settings'],
    ['system.events', () => 'SELECT * FROM system.events'],
    ['system.`events`', () => 'SELECT * FROM system.`events`'],
    ['system.one', () => 'SELECT * FROM system.one'],
    ['system.numbers', () => 'SELECT * FROM system.numbers LIMIT 3'],
    ['system.dictionaries', () => 'SELECT * FROM system.dictionaries'],
    ['system.mutations', () => 'SELECT * FROM system.mutations'],
    ['SYSTEM.TABLES in capitals', () => 'SELECT * FROM SYSTEM.TABLES'],
    ['system in mixed case', () => 'SeLeCt * FrOm SyStEm.TaBlEs'],
    ['information_schema.tables', () => 'SELECT * FROM information_schema.tables'],
    ['INFORMATION_SCHEMA.COLUMNS', () => 'SELECT * FROM INFORMATION_SCHEMA.COLUMNS'],
    ['a table as an Identifier parameter', () => 'SELECT * FROM {t:Identifier}', () => ({ t: 'events_daily_mv' })],
    ['system table as an Identifier parameter', () => 'SELECT * FROM {t:Identifier}', () => ({ t: 'system.parts' })],
    // Table functions
    ['merge()', () => "SELECT * FROM merge('default', '^events$')"],
    ['merge() on currentDatabase', () => "SELECT * FROM merge(currentDatabase(), 'facts')"],
    ['merge() by regexp only', () => "SELECT * FROM merge('^events')"],
    ['MERGE() in capitals', () => "SELECT * FROM MERGE('default', '^events$')"],
    ['merge() in a join', () => "SELECT * FROM numbers(3) AS n JOIN merge('default', 'facts') AS f ON 1 = 1"],
    ['view()', () => 'SELECT * FROM view(SELECT * FROM events)'],
    ['view() of a view', () => 'SELECT * FROM view(SELECT * FROM events_daily_mv)'],
    ['view() of system', () => 'SELECT * FROM view(SELECT * FROM system.tables)'],
    ['remote()', () => "SELECT * FROM remote('127.0.0.1', default.events)"],
    ['remote() by strings', () => "SELECT * FROM remote('127.0.0.1', 'default', 'events')"],
    ['remoteSecure()', () => "SELECT * FROM remoteSecure('127.0.0.1', default.facts)"],
    ['cluster()', () => "SELECT * FROM cluster('default', default.events)"],
    ['clusterAllReplicas()', () => "SELECT * FROM clusterAllReplicas('default', default.events)"],
    ['loop()', () => 'SELECT * FROM loop(events) LIMIT 3'],
    ['mergeTreeIndex()', () => "SELECT * FROM mergeTreeIndex('default', 'events')"],
    ['mergeTreeIndex() with marks', () => 'SELECT * FROM mergeTreeIndex(currentDatabase(), events, with_marks = true)'],
    ['file()', () => "SELECT * FROM file('/etc/passwd', 'LineAsString')"],
    ['url()', () => "SELECT * FROM url('http://127.0.0.1:1/', 'LineAsString')"],
    ['s3()', () => "SELECT * FROM s3('http://127.0.0.1:1/x.csv', 'CSV')"],
    ['executable()', () => "SELECT * FROM executable('cat /etc/passwd', 'LineAsString', 'x String')"],
    ['dictionary()', () => "SELECT * FROM dictionary('d')"],
    ['input()', () => "SELECT * FROM input('x String')"],
    ['sqlite()', () => "SELECT * FROM sqlite('/tmp/x.db', 't')"],
    // Dictionaries and functions that name tables
    ['dictGet', () => "SELECT dictGet('d', 'x', toUInt64(1))"],
    ['joinGet', () => `SELECT joinGet('events', 'user_id', toUUID('${F()}'))`],
    ['hasColumnInTable', () => "SELECT hasColumnInTable('default', 'events', 'user_id')"],
    ['the file function', () => "SELECT file('/etc/passwd')"],
    ['getServerSetting', () => "SELECT getServerSetting('path')"],
    // JOINs
    ['join with the view', () => 'SELECT a.user_id, b.* FROM events AS a JOIN events_daily_mv AS b ON 1 = 1'],
    ['cross join facts', () => 'SELECT e.user_id, f.user_id, f.project_id FROM events AS e CROSS JOIN facts AS f'],
    ['self join on other projects', () => 'SELECT x.* FROM events AS e LEFT JOIN default.events AS x ON x.project_id != e.project_id'],
    ['full outer join', () => 'SELECT * FROM events AS e FULL OUTER JOIN facts AS f ON e.user_id = f.user_id'],
    ['comma join', () => 'SELECT * FROM events AS e, default.facts AS f'],
    ['join system.parts', () => 'SELECT * FROM events AS e JOIN system.parts AS p ON 1 = 1'],
    ['paste join', () => 'SELECT * FROM events AS e PASTE JOIN facts AS f'],
    ['join a subquery of a view', () => 'SELECT * FROM events AS e JOIN (SELECT * FROM events_hourly_mv) AS m ON 1 = 1'],
    ['join on a foreign id', () => `SELECT * FROM events AS e RIGHT JOIN (SELECT toUUID('${F()}') AS p) AS x ON e.project_id = x.p`],
    // UNION, INTERSECT, EXCEPT
    ['union with the view', () => 'SELECT toString(project_id) FROM events UNION ALL SELECT toString(project_id) FROM events_daily_mv'],
    ['union with system', () => 'SELECT toString(project_id) FROM events UNION ALL SELECT name FROM system.tables'],
    ['union distinct', () => 'SELECT user_id FROM events UNION DISTINCT SELECT user_id FROM facts'],
    ['intersect', () => 'SELECT user_id FROM events INTERSECT SELECT user_id FROM default.facts'],
    ['except', () => 'SELECT user_id FROM facts EXCEPT SELECT user_id FROM default.events'],
    ['union through comments', () => 'SELECT * FROM events/**/UNION ALL/**/SELECT * FROM events_hourly_mv'],
    // CTEs
    ['a CTE of events', () => 'WITH x AS (SELECT * FROM events) SELECT * FROM x'],
    ['a CTE named events over the view', () => 'WITH events AS (SELECT * FROM events_daily_mv) SELECT * FROM events'],
    ['a CTE named like the view', () => 'WITH events_daily_mv AS (SELECT 1 AS x) SELECT * FROM events_daily_mv'],
    [
      'a CTE name from another scope',
      () => 'SELECT * FROM (WITH events_daily_mv AS (SELECT 1 AS x) SELECT x FROM events_daily_mv) AS a, events_daily_mv AS b',
    ],
    ['a CTE of system', () => 'WITH t AS (SELECT * FROM system.tables) SELECT * FROM t'],
    ['a scalar CTE of the view', () => 'WITH (SELECT groupArray(toString(project_id)) FROM events_daily_mv) AS s SELECT s'],
    ['a CTE used by IN', () => 'WITH ids AS (SELECT project_id FROM facts) SELECT * FROM events WHERE project_id IN ids'],
    ['a CTE over a merge()', () => "WITH m AS (SELECT * FROM merge('default', 'events')) SELECT * FROM m"],
    // Subqueries and IN
    ['nested subqueries', () => 'SELECT * FROM (SELECT * FROM (SELECT * FROM default.facts))'],
    ['a scalar subquery', () => 'SELECT (SELECT groupArray(user_id) FROM events)'],
    ['IN a subquery', () => 'SELECT * FROM facts WHERE user_id IN (SELECT user_id FROM events)'],
    ['IN the view', () => "SELECT 1 WHERE 'x' IN events_daily_mv"],
    ['IN a qualified view', () => 'SELECT * FROM events WHERE project_id IN default.events_hourly_mv'],
    ['GLOBAL IN system', () => 'SELECT * FROM events WHERE (project_id, created_at, event_id) GLOBAL IN system.parts'],
    [
      'IN an Identifier parameter',
      () => 'SELECT * FROM events WHERE project_id IN {t:Identifier}',
      () => ({ t: 'default.events_daily_mv' }),
    ],
    ['NOT IN own', () => 'SELECT * FROM events WHERE project_id NOT IN (SELECT project_id FROM events)'],
    ['EXISTS foreign', () => `SELECT EXISTS(SELECT * FROM events WHERE project_id = '${F()}') AS e`],
    ['an error message of the view', () => 'SELECT (SELECT toUInt8(any(toString(project_id))) FROM events_daily_mv)'],
    ['an error message of foreign rows', () => `SELECT toUInt8(user_id) FROM events WHERE project_id = '${F()}'`],
    ['throwIf on foreign rows', () => `SELECT throwIf(count() > 0, 'seen') FROM events WHERE project_id = '${S()}'`],
    ['an aliased view', () => 'SELECT (SELECT toUInt8(any(toString(project_id))) FROM events_daily_mv AS "x(y)")'],
    ['an alias that looks like an AST note', () => 'SELECT * FROM events_daily_mv AS `a (alias b)`'],
    ['a name that looks like an AST note', () => 'SELECT * FROM `events_daily_mv (alias x)`'],
    // arrayJoin
    ['arrayJoin of a scalar', () => 'SELECT arrayJoin((SELECT groupArray(user_id) FROM events))'],
    ['arrayJoin of the view', () => 'SELECT arrayJoin([(SELECT any(toString(project_id)) FROM events_daily_mv)])'],
    ['ARRAY JOIN a foreign id', () => `SELECT * FROM events ARRAY JOIN [project_id, toUUID('${F()}')] AS p WHERE p = toUUID('${F()}')`],
    // Settings overrides
    ['SETTINGS lifting the filter', () => "SELECT * FROM events SETTINGS additional_table_filters = {'events': '1'}"],
    [
      'subquery SETTINGS lifting the filter',
      () => "SELECT * FROM (SELECT * FROM events SETTINGS additional_table_filters = {'events': '1'})",
    ],
    ['subquery SETTINGS emptying the filters', () => 'SELECT * FROM (SELECT * FROM facts SETTINGS additional_table_filters = {})'],
    ['scalar SETTINGS', () => "WITH (SELECT 1 SETTINGS additional_table_filters = {'facts': '1'}) AS x SELECT * FROM facts"],
    ['SETTINGS readonly', () => 'SELECT * FROM events SETTINGS readonly = 0'],
    ['SETTINGS trivial count', () => 'SELECT count() FROM events SETTINGS optimize_trivial_count_query = 1'],
    ['SET the filter', () => 'SET additional_table_filters = {}'],
    ['a script that sets', () => 'SELECT 1; SET additional_table_filters = {}; SELECT * FROM events'],
    ['a result filter', () => "SELECT * FROM events SETTINGS additional_result_filter = '1'"],
    // Comments and casing
    ['a comment hiding the name', () => 'SELECT * FROM /* events */ events_daily_mv'],
    ['a line comment', () => 'SELECT * FROM events -- ; SELECT * FROM system.tables'],
    ['the view in capitals', () => 'select * from EVENTS_DAILY_MV'],
    ['quoted system', () => 'SELECT * FROM `system`.`tables`'],
    // Other statements and clauses
    ['INSERT', () => 'INSERT INTO events SELECT * FROM events'],
    ['INTO OUTFILE', () => "SELECT * FROM events INTO OUTFILE '/tmp/project-sql-hostile.out'"],
    ['EXPLAIN', () => 'EXPLAIN SELECT * FROM events_daily_mv'],
    ['SHOW TABLES', () => 'SHOW TABLES'],
    ['DESCRIBE', () => 'DESCRIBE TABLE system.tables'],
    ['FINAL', () => 'SELECT * FROM events FINAL'],
    ['SAMPLE', () => 'SELECT * FROM events SAMPLE 1'],
    ['virtual columns', () => 'SELECT _part, _table, * FROM events'],
    ['a count of the view in a WHERE', () => 'SELECT * FROM numbers(10) WHERE number IN (SELECT count() FROM events_daily_mv)'],
  ];
}

/**
 * Lower-case strings that only the other projects' rows hold (seeded by seedAnalytics with the
 * markers FOREIGNSIB and FOREIGN): no answer to a hostile query may show one that its own text
 * did not contain.
 */
export function foreignMarkersOf(projectIds: string[], seeded: { eventIds: string[]; factIds: number[] }[]): string[] {
  return [
    'foreign',
    // 'FOREIGN' in hex and base64, as a query might encode what it reads
    '464f524549474e',
    'rk9sruLhtg'.toLowerCase(),
    ...projectIds.flatMap((id) => [id, id.replace(/-/g, '')]),
    ...seeded.flatMap((s) => s.eventIds),
    ...seeded.flatMap((s) => s.factIds).map(String),
  ].map((marker) => marker.toLowerCase());
}
