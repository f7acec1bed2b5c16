/**
 * How a tool connects to the project's read-only ClickHouse HTTP interface (docs/clickhouse-interface.md):
 * the values each one needs, filled in with the dashboard's own origin, the credential's username
 * (the project id) and, while it is on screen, its password. The interface is served under
 * `/clickhouse` of the service that serves this page, which always works; its own port
 * (CLICKHOUSE_INTERFACE_PORT, for tools that cannot take a path) is configured by the operator,
 * so the snippets never guess it.
 */
export const INTERFACE_PATH = '/clickhouse';
/** What the snippets say instead of a password the page no longer knows (it is shown only once). */
export const PASSWORD_VARIABLE = 'CLICKHOUSE_PASSWORD';

export type ConnectionValues = {
  /** The page's origin, `https://analytics.example.com` or `http://127.0.0.1:3000`. */
  origin: string;
  username: string;
  /** The new credential's password; null once it has been put away. */
  password: string | null;
};

/** A setting of a GUI tool; `placeholder` when the value is a description of what to type (a password no longer known). */
export type Setting = { name: string; value: string; placeholder?: boolean };
export type ToolSnippet =
  | { id: string; label: string; kind: 'code'; language: string; text: string }
  | { id: string; label: string; kind: 'settings'; intro: string; settings: Setting[]; text: string };

const EXAMPLE_QUERY = 'SELECT event_name, count() AS events FROM events GROUP BY event_name ORDER BY events DESC';

/** Host, port and TLS of the origin as a GUI tool asks for them (the port written out even when it is the scheme's default). */
export function serverOf(origin: string): { host: string; port: string; secure: boolean } {
  const url = new URL(origin);
  const secure = url.protocol === 'https:';
  return { host: url.hostname, port: url.port || (secure ? '443' : '80'), secure };
}

function nodeSnippet({ origin, username, password }: ConnectionValues): string {
  return [
    "import { createClient } from '@clickhouse/client';",
    '',
    'const client = createClient({',
    `  url: '${origin}',`,
    `  pathname: '${INTERFACE_PATH}',`,
    `  username: '${username}',`,
    password === null ? `  password: process.env.${PASSWORD_VARIABLE},` : `  password: '${password}',`,
    '});',
    'const result = await client.query({',
    `  query: '${EXAMPLE_QUERY}',`,
    "  format: 'JSONEachRow',",
    '});',
    'console.log(await result.json());',
    'await client.close();',
  ].join('\n');
}

function curlSnippet({ origin, username, password }: ConnectionValues): string {
  // The password is base64url (fbch_…): safe unquoted. The variable form is double-quoted so the shell expands it.
  const user = password === null ? `"${username}:$${PASSWORD_VARIABLE}"` : `${username}:${password}`;
  return [
    `curl -u ${user} '${origin}${INTERFACE_PATH}/?query=SELECT+1'`,
    '',
    '# A longer query goes in the body; FORMAT picks the output',
    `echo '${EXAMPLE_QUERY} FORMAT CSVWithNames' \\`,
    `  | curl -u ${user} '${origin}${INTERFACE_PATH}/' --data-binary @-`,
  ].join('\n');
}

function guiSettings(
  { origin, username, password }: ConnectionValues,
  names: { host: string; port: string; secure: string; path: string },
) {
  const server = serverOf(origin);
  const settings: Setting[] = [
    { name: names.host, value: server.host },
    { name: names.port, value: server.port },
    { name: names.secure, value: server.secure ? 'On' : 'Off' },
    { name: names.path, value: INTERFACE_PATH },
    { name: 'Username', value: username },
    password === null
      ? { name: 'Password', value: 'the password shown when the credential was created', placeholder: true }
      : { name: 'Password', value: password },
  ];
  return settings;
}

function settingsSnippet(id: string, label: string, intro: string, settings: Setting[], extra: Setting[] = []): ToolSnippet {
  const all = [...settings.slice(0, 3), ...extra, ...settings.slice(3)];
  return { id, label, kind: 'settings', intro, settings: all, text: all.map(({ name, value }) => `${name}: ${value}`).join('\n') };
}

/**
 * DbGate takes one URL, through @clickhouse/client, which reads a URL's path as the database name:
 * the interface's path goes as the `pathname` URL parameter (docs/clickhouse-interface.md, "Connect DbGate").
 */
function dbgateSnippet({ origin, username, password }: ConnectionValues): ToolSnippet {
  const settings: Setting[] = [
    { name: 'Connection type', value: 'ClickHouse' },
    { name: 'URL', value: `${origin}/?pathname=${INTERFACE_PATH}` },
    { name: 'User', value: username },
    password === null
      ? { name: 'Password', value: 'the password shown when the credential was created', placeholder: true }
      : { name: 'Password', value: password },
    { name: 'Database', value: 'default' },
  ];
  return {
    id: 'dbgate',
    label: 'DbGate',
    kind: 'settings',
    intro: 'Add a new connection with these fields.',
    settings,
    text: settings.map(({ name, value }) => `${name}: ${value}`).join('\n'),
  };
}

/** Every tool's snippet, in the order the panel offers them. */
export function connectionSnippets(values: ConnectionValues): ToolSnippet[] {
  return [
    { id: 'node', label: '@clickhouse/client', kind: 'code', language: 'TypeScript', text: nodeSnippet(values) },
    { id: 'curl', label: 'curl', kind: 'code', language: 'Shell', text: curlSnippet(values) },
    settingsSnippet(
      'grafana',
      'Grafana',
      'Add a ClickHouse data source (the grafana-clickhouse-datasource plugin) with these settings.',
      guiSettings(values, { host: 'Server address', port: 'Server port', secure: 'Secure connection', path: 'HTTP URL path' }),
      [{ name: 'Protocol', value: 'HTTP' }],
    ),
    settingsSnippet(
      'metabase',
      'Metabase',
      'Add a database of type ClickHouse (Metabase’s ClickHouse driver) with these settings.',
      guiSettings(values, { host: 'Host', port: 'Port', secure: 'Use a secure connection (SSL)', path: 'Path' }),
    ),
    dbgateSnippet(values),
    settingsSnippet(
      'dbeaver',
      'DBeaver',
      'Create a connection of type ClickHouse with these settings.',
      guiSettings(values, { host: 'Host', port: 'Port', secure: 'SSL', path: 'Path' }),
    ),
  ];
}
