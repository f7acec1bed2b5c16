import { useMemo, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api, type Schemas, unwrap } from '../api/client';
import { ApiFailure } from '../api/failure';
import { ConnectTool } from '../components/connect-tool';
import { Page } from '../components/layout';
import { SavedQueries } from '../components/saved-queries';
import { ScrollRegion } from '../components/scroll-region';
import { SqlEditor, type SqlSchema } from '../components/sql-editor';
import { Empty, FailureNotice, Loading } from '../components/states';
import { toCsv } from '../lib/csv';
import { formatCount, formatDate, formatDateTime } from '../lib/format';
import { addToHistory, clearHistory, type HistoryEntry, readHistory } from '../lib/sql-history';
import { saveFile } from '../lib/streamed-download';
import { type Resource, useResource } from '../lib/use-resource';

type Result = Schemas['ProjectSqlResult'];
type Run =
  | { state: 'idle' }
  | { state: 'running'; previous: Run }
  | { state: 'done'; result: Result; totalMs: number; id: number }
  | { state: 'failed'; failure: ApiFailure; sql: string };

/** The tables POST /projects/:id/sql reads (docs/project-sql.md); the engine describes their columns. */
const TABLES = ['events', 'facts', 'events_daily', 'events_hourly'] as const;
const DEFAULT_QUERY = `SELECT event_name, count() AS events, uniq(user_id) AS users
FROM events
GROUP BY event_name
ORDER BY events DESC
LIMIT 100`;
const PAGE_SIZES = [25, 50, 100] as const;

/**
 * Queries to start from. A property (`properties.<key>`) has no fixed type: it is grouped by after a
 * cast (docs/project-sql.md, "Properties"), which the engine's own error does not say.
 */
const EXAMPLES: { label: string; sql: string }[] = [
  { label: 'Events and users by name', sql: DEFAULT_QUERY },
  {
    label: 'Events by a property (country)',
    sql: `SELECT properties.country::String AS country, count() AS events
FROM events
GROUP BY country
ORDER BY events DESC
LIMIT 100`,
  },
  {
    label: 'Users by a numeric property (plan seats)',
    sql: `SELECT toInt64OrZero(toString(properties.seats)) AS seats, uniq(user_id) AS users
FROM events
GROUP BY seats
ORDER BY seats`,
  },
  {
    label: 'Daily events of one name (a parameter)',
    sql: `SELECT day, sum(events) AS events
FROM events_daily
WHERE event_name = {name:String}
GROUP BY day
ORDER BY day`,
  },
];
const PREDEFINED_NOTE =
  'On your plan, events, events_daily and events_hourly hold only feedback_list, feedback_detail and submit_feedback. The Pro and Team plans read every event name.';

/**
 * The columns of each readable table, as the engine describes them: a `SELECT * … LIMIT 0` through
 * the same route and isolation as any query (system tables and DESCRIBE are refused there). One
 * at a time: an account runs at most two project queries at once, and the owner's own run may be
 * the other.
 */
async function loadSchema(projectId: string): Promise<SqlSchema> {
  const schema: SqlSchema = [];
  for (const table of TABLES) {
    const result = await unwrap(
      api.POST('/projects/{id}/sql', { params: { path: { id: projectId } }, body: { query: `SELECT * FROM ${table} LIMIT 0` } }),
    );
    schema.push({ table, columns: result.columns });
  }
  return schema;
}

export function SqlConsolePage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const [history, setHistory] = useState<HistoryEntry[]>(() => readHistory(projectId));
  const [text, setText] = useState(() => history[0]?.sql ?? DEFAULT_QUERY);
  const [loaded, setLoaded] = useState(() => ({ text, version: 0 }));
  const [range, setRange] = useState({ from: '', to: '' });
  const [run, setRun] = useState<Run>({ state: 'idle' });
  const ticket = useRef(0);
  const schema = useResource(() => loadSchema(projectId), [projectId]);
  const saved = useResource(() => unwrap(api.GET('/projects/{id}/saved-queries', { params: { path: { id: projectId } } })), [projectId]);
  const emptySchema = useMemo<SqlSchema>(() => TABLES.map((table) => ({ table, columns: [] })), []);
  const running = run.state === 'running';

  const execute = async (query: string) => {
    const sql = query.trim();
    if (!sql || running) return;
    const mine = ++ticket.current;
    setRun((previous) => ({ state: 'running', previous }));
    const started = performance.now();
    const ranAt = new Date().toISOString();
    try {
      const result = await unwrap(
        api.POST('/projects/{id}/sql', {
          params: { path: { id: projectId } },
          body: { query: sql, ...(range.from ? { dateFrom: range.from } : {}), ...(range.to ? { dateTo: range.to } : {}) },
        }),
      );
      if (mine !== ticket.current) return;
      setRun({ state: 'done', result, totalMs: Math.round(performance.now() - started), id: mine });
      setHistory(addToHistory(projectId, { sql, ranAt, rows: result.row_count, elapsedMs: result.elapsed_ms, error: null }));
    } catch (error) {
      if (mine !== ticket.current) return;
      const failure = ApiFailure.of(error);
      setRun({ state: 'failed', failure, sql });
      // A refusal is worth keeping too: it is the query the owner is fixing.
      if (failure.status === 400) setHistory(addToHistory(projectId, { sql, ranAt, rows: null, elapsedMs: null, error: failure.reason }));
    }
  };
  const open = (sql: string, andRun: boolean) => {
    setText(sql);
    setLoaded({ text: sql, version: loaded.version + 1 });
    if (andRun) void execute(sql);
  };

  return (
    <Page title="SQL console" projectId={projectId}>
      <div class="sql-layout">
        <section
          class="card sql-query"
          aria-labelledby="query-heading"
          onKeyDown={(e) => {
            // Ctrl/Cmd+Enter runs from anywhere in the query form; the editor handles it itself first.
            if (e.key === 'Enter' && (e.ctrlKey || e.metaKey) && !e.defaultPrevented) {
              e.preventDefault();
              void execute(text);
            }
          }}
        >
          <h2 id="query-heading">Query</h2>
          <p class="muted field-note" id="query-help">
            One ClickHouse <code>SELECT</code> over {TABLES.join(', ')}: it sees only this project's rows, inside your plan's window.{' '}
            <kbd>Ctrl</kbd>+<kbd>Enter</kbd> (<kbd>⌘</kbd>+<kbd>Enter</kbd> on a Mac) runs it.
          </p>
          <SqlEditor
            loaded={loaded}
            onChange={setText}
            onRun={(sql) => void execute(sql)}
            schema={schema.data ?? emptySchema}
            label="SQL query (Ctrl+Enter runs it)"
          />
          <form
            class="filters sql-run"
            aria-label="Run the query"
            onSubmit={(e) => {
              e.preventDefault();
              void execute(text);
            }}
          >
            <div class="field">
              <label for="sql-from">From (optional)</label>
              <input id="sql-from" type="date" value={range.from} onInput={(e) => setRange({ ...range, from: e.currentTarget.value })} />
            </div>
            <div class="field">
              <label for="sql-to">To (optional)</label>
              <input id="sql-to" type="date" value={range.to} onInput={(e) => setRange({ ...range, to: e.currentTarget.value })} />
            </div>
            <button type="submit" class="primary" disabled={running || text.trim() === ''} aria-keyshortcuts="Control+Enter Meta+Enter">
              {running ? 'Running…' : 'Run'}
            </button>
            <p class="muted field-note">Without dates the query sees your plan's whole window, ending today.</p>
          </form>
        </section>
        <div class="sql-side">
          <SchemaPanel schema={schema} />
          <Examples onOpen={(sql) => open(sql, false)} />
        </div>
      </div>
      <Results run={run} onRetry={(sql) => void execute(sql)} />
      <div class="sql-layout">
        <SavedQueries projectId={projectId} saved={saved} text={text} onOpen={open} busy={running} />
        <History
          entries={history}
          onOpen={(sql) => open(sql, false)}
          onClear={() => {
            clearHistory(projectId);
            setHistory([]);
          }}
        />
      </div>
      {/* Keyed by the project: a password shown for one project never stays on screen for the next. */}
      <ConnectTool key={projectId} projectId={projectId} />
    </Page>
  );
}

function SchemaPanel({ schema }: { schema: Resource<SqlSchema> }) {
  return (
    <section class="card sql-schema" aria-labelledby="schema-heading" aria-busy={schema.state === 'loading'}>
      <h2 id="schema-heading">Schema</h2>
      {schema.state === 'failed' && <FailureNotice failure={schema.failure} onRetry={schema.reload} />}
      {schema.state === 'loading' && !schema.data && <Loading what="the schema" />}
      {schema.data && (
        <>
          <p class="muted field-note">As the engine describes them; each holds only this project's rows. Names complete in the editor.</p>
          {schema.data.map(({ table, columns }, index) => (
            <details key={table} open={index === 0}>
              <summary>
                <code>{table}</code> <span class="muted">{columns.length} columns</span>
              </summary>
              <ul class="schema-columns" aria-label={`Columns of ${table}`}>
                {columns.map((column) => (
                  <li key={column.name}>
                    <code>{column.name}</code> <span class="muted">{column.type}</span>
                  </li>
                ))}
              </ul>
            </details>
          ))}
        </>
      )}
    </section>
  );
}

function Examples({ onOpen }: { onOpen: (sql: string) => void }) {
  return (
    <section class="card" aria-labelledby="examples-heading">
      <h2 id="examples-heading">Examples</h2>
      <p class="muted field-note">
        A property has no fixed type: cast it to group by it (<code>properties.country::String</code> or <code>toString(…)</code>).
      </p>
      <ul class="rows" aria-label="Example queries">
        {EXAMPLES.map((example) => (
          <li key={example.label} class="row">
            <span>{example.label}</span>
            <button type="button" onClick={() => onOpen(example.sql)}>
              Open<span class="visually-hidden"> {example.label}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Results({ run, onRetry }: { run: Run; onRetry: (sql: string) => void }) {
  const shown = run.state === 'running' ? run.previous : run;
  return (
    <section class="card" aria-labelledby="result-heading" aria-busy={run.state === 'running'}>
      <h2 id="result-heading">Result</h2>
      {run.state === 'running' && <Loading what="the result" />}
      {shown.state === 'idle' && run.state !== 'running' && <Empty>Run a query to see its rows here.</Empty>}
      {shown.state === 'failed' && <QueryFailure failure={shown.failure} onRetry={() => onRetry(shown.sql)} />}
      {shown.state === 'done' && <ResultTable key={shown.id} result={shown.result} totalMs={shown.totalMs} />}
    </section>
  );
}

/**
 * A refused or failed query as the service gives it: the engine's code and message verbatim (a
 * `Code: 60. DB::Exception: … (UNKNOWN_TABLE)` from ClickHouse, or the isolation's refusal),
 * every other failure (401, 402, 429, 5xx) as the other pages show it.
 */
function QueryFailure({ failure, onRetry }: { failure: ApiFailure; onRetry: () => void }) {
  if (failure.status !== 400 || !failure.reason.startsWith('query: ')) return <FailureNotice failure={failure} onRetry={onRetry} />;
  const message = failure.reason.slice('query: '.length);
  const code = /\bCode: (\d+)\./.exec(message)?.[1];
  const name = [...message.matchAll(/\(([A-Z][A-Z0-9_]+)\)/g)].at(-1)?.[1];
  return (
    <div class="notice notice-error" role="alert" data-testid="query-error">
      <p>
        <strong>{code ? 'ClickHouse refused the query' : 'The query was refused'}</strong>
        {code && (
          <>
            {' '}
            · code <span data-testid="error-code">{code}</span>
            {name && ` (${name})`}
          </>
        )}
      </p>
      <pre class="engine-message">{message}</pre>
    </div>
  );
}

function ResultTable({ result, totalMs }: { result: Result; totalMs: number }) {
  const [size, setSize] = useState<number>(PAGE_SIZES[1]);
  const [page, setPage] = useState(0);
  const pages = Math.max(1, Math.ceil(result.rows.length / size));
  const current = Math.min(page, pages - 1);
  const first = current * size;
  const rows = result.rows.slice(first, first + size);
  const numeric = result.columns.map((column) => /^(Nullable\()?(U?Int|Float|Decimal)/.test(column.type));
  const download = () => {
    const csv = toCsv(
      result.columns.map((column) => column.name),
      result.rows,
    );
    const stamp = new Date().toISOString().slice(0, 19).replaceAll(':', '-');
    saveFile(new Blob([csv], { type: 'text/csv;charset=utf-8' }), `query-result-${stamp}.csv`);
  };
  return (
    <>
      <Narrowing result={result} />
      <div class="sql-meta">
        <p role="status" data-testid="result-meta">
          {formatCount(result.row_count)} {result.row_count === 1 ? 'row' : 'rows'} · {formatCount(result.elapsed_ms)} ms in the engine ·{' '}
          {formatCount(totalMs)} ms in all · data from {formatDate(result.date_from)} to {formatDate(result.date_to)}
        </p>
        <button type="button" onClick={download} disabled={result.columns.length === 0}>
          Download CSV
        </button>
      </div>
      {result.truncated && (
        <p class="notice notice-warn" role="note">
          The result was cut at {formatCount(result.row_count)} rows. Aggregate, or add a <code>LIMIT</code> and an <code>ORDER BY</code>,
          to see what matters.
        </p>
      )}
      {result.rows.length === 0 ? (
        <Empty>The query returned no rows.</Empty>
      ) : (
        <>
          <ScrollRegion label="Result rows" className="sql-grid">
            <table class="data-table">
              <thead>
                <tr>
                  {result.columns.map((column, index) => (
                    <th scope="col" key={column.name} class={numeric[index] ? 'num' : undefined}>
                      {column.name}
                      <span class="column-type">{column.type}</span>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((row, rowIndex) => (
                  <tr key={first + rowIndex}>
                    {result.columns.map((column, index) => (
                      <td key={column.name} class={numeric[index] ? 'num' : undefined}>
                        <Cell value={row[column.name]} />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollRegion>
          <nav class="link-row sql-pages" aria-label="Result pages">
            <button type="button" onClick={() => setPage(current - 1)} disabled={current === 0}>
              Previous rows
            </button>
            <span data-testid="page-range">
              Rows {formatCount(first + 1)}–{formatCount(first + rows.length)} of {formatCount(result.rows.length)}
            </span>
            <button type="button" onClick={() => setPage(current + 1)} disabled={current >= pages - 1}>
              Next rows
            </button>
            <label class="inline-label" for="page-size">
              Rows per page
            </label>
            <select
              id="page-size"
              value={size}
              onChange={(e) => {
                setSize(Number(e.currentTarget.value));
                setPage(0);
              }}
            >
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n}
                </option>
              ))}
            </select>
          </nav>
        </>
      )}
    </>
  );
}

function Cell({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span class="muted">NULL</span>;
  if (typeof value === 'object') return <code>{JSON.stringify(value)}</code>;
  return <>{String(value)}</>;
}

/** The plan's narrowing of what the query saw (SPEC 2.8 echo), in words. */
function Narrowing({ result }: { result: Result }) {
  return (
    <>
      {result.retention_clamped && (
        <p class="notice notice-plan" role="note">
          Your plan keeps {result.retention_window_days} days of data, so the query saw {formatDate(result.date_from)} to{' '}
          {formatDate(result.date_to)} instead of the range you asked for.
        </p>
      )}
      {result.event_scope === 'predefined_only' && (
        <p class="notice notice-plan" role="note" data-testid="scope-notice">
          {PREDEFINED_NOTE}
        </p>
      )}
    </>
  );
}

function History({ entries, onOpen, onClear }: { entries: HistoryEntry[]; onOpen: (sql: string) => void; onClear: () => void }) {
  return (
    <section class="card" aria-labelledby="history-heading">
      <h2 id="history-heading">Recent runs</h2>
      <p class="muted field-note">Kept in this browser only: the query text and how it went, never the rows.</p>
      {entries.length === 0 && <Empty>No query run yet in this browser.</Empty>}
      {entries.length > 0 && (
        <>
          <ol class="rows" aria-label="Recent runs">
            {entries.map((entry) => (
              <li key={entry.ranAt} class="row row-stacked">
                <div class="row-main">
                  <span class="muted">
                    {formatDateTime(entry.ranAt)} ·{' '}
                    {entry.error === null ? `${formatCount(entry.rows)} rows, ${formatCount(entry.elapsedMs)} ms` : 'refused'}
                  </span>
                  <button type="button" onClick={() => onOpen(entry.sql)}>
                    Open<span class="visually-hidden"> the query run {formatDateTime(entry.ranAt)}</span>
                  </button>
                </div>
                <code class="sql-snippet">{entry.sql}</code>
              </li>
            ))}
          </ol>
          <button type="button" onClick={onClear}>
            Clear history
          </button>
        </>
      )}
    </section>
  );
}
