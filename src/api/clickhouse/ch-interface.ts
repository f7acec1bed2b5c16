import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createBrotliCompress, createDeflate, createGzip, constants as zlibConstants } from 'node:zlib';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/logger.js';
import { hashSecret } from '../../core/secrets.js';
import { interfaceCatalogue } from '../../olap/readonly/interface-catalogue.js';
import { CURRENT_USER_PARAM, outputFormats, prepareInterfaceStatement } from '../../olap/readonly/interface-statement.js';
import { createProjectQueries, ProjectQueryBusy, ProjectQueryRefused } from '../../olap/readonly/project-query.js';
import { binaryBytes } from '../../olap/readonly/readonly-session.js';
import { useClickhouseCredential } from '../../oltp/clickhouse-credentials.repo.js';
import { findProject } from '../../oltp/projects.repo.js';
import type { ApiDeps } from '../deps.js';
import { guardedListener } from '../http-server.js';
import { clientIp } from '../middleware/rate-limit.js';
import { projectSqlScope } from '../shared/project-sql-scope.js';
import { isUuid } from '../validation.js';
import { CH, ClickhouseError, chError, fromEngineMessage } from './ch-errors.js';
import { contentTypeOf, refusedFormatMessage, SERVED_OUTPUT_FORMATS } from './ch-formats.js';
import type { ClickhouseHandler } from './ch-handler.js';
import { compressBlock, nativeCompressor } from './ch-native-compression.js';
import { parseRequest, readQuery, requestTarget } from './ch-request.js';
import { noteCredential, noteProgress, noteStatement } from './ch-request-log.js';
import { type CurrentSettings, judgeSettings } from './ch-settings.js';
import { summaryOf } from './ch-summary.js';

/** Defaults of the interface (docs/clickhouse-interface.md); each is configurable. */
export const CLICKHOUSE_INTERFACE_DEFAULTS = {
  port: 8124,
  maxRows: 10_000_000,
  maxBytes: 1024 ** 3,
  timeoutMs: 60_000,
} as const;

/** Where the API's own port serves the interface. */
export const CLICKHOUSE_PATH = '/clickhouse';

/** Bytes an answer with wait_end_of_query=1 is held before it is sent at most; past it, it streams. */
const WAIT_END_OF_QUERY_BYTES = 32 * 1024 * 1024;

/**
 * Bytes of the answer held before the headers go, as a server's HTTP output buffer holds them
 * (DBMS_DEFAULT_BUFFER_SIZE, 1 MiB): a smaller answer is sent whole, with the final summary and,
 * on an error, its own status instead of an error after a 200.
 */
const RESPONSE_BUFFER_BYTES = 1024 * 1024;

export type { ClickhouseHandler } from './ch-handler.js';

/**
 * The read-only, project-scoped ClickHouse HTTP interface (issue 29, docs/clickhouse-interface.md):
 * the same handler serves `/clickhouse` of the API port and its own port. A credential of
 * /projects/:id/clickhouse-credentials reads its project's analytics, as POST /projects/:id/sql
 * does, and every query goes through the same sandbox (olap/readonly/project-query.ts): engine-side
 * row filters, readonly session, parse-tree guard, the plan's window and event scope, time and
 * memory limits, the project-query lane. The answer is the engine's own output in the requested
 * format, streamed as it is written; errors are in ClickHouse's form (ch-errors.ts).
 */
export function createClickhouseHandler(deps: ApiDeps, logger: Logger): ClickhouseHandler {
  const { config, sql, rateLimits } = deps;
  const limits = config.clickhouseInterface;
  const queries = createProjectQueries({
    clickhouse: deps.clickhouse,
    clickhouseUrl: config.clickhouseUrl,
    dataDir: config.dataDir,
    timeoutMs: limits.timeoutMs,
    maxMemoryBytes: config.projectSql.maxMemoryBytes,
    accountConcurrency: config.projectSql.accountConcurrency,
    maxRows: limits.maxRows,
    maxResultBytes: limits.maxBytes,
    label: 'ClickHouse interface queries',
    onAbandoned: (label) =>
      logger.error({ label }, 'read-only lane: the engine had not let go of a query past its deadline and grace; its turn was given back'),
  });
  const engineKey = {};
  let settingsList: Promise<CurrentSettings> | undefined;
  /** The engine's settings and their values, read once (ch-settings.ts judges a request's against them). */
  const currentSettings = () => {
    settingsList ??= deps.clickhouse
      .query({ query: 'SELECT name, value, type FROM system.settings', format: 'JSONEachRow' })
      .then((r) => r.json<{ name: string; value: string; type: string }>())
      .then((rows) => new Map(rows.map(({ name, value, type }) => [name, { value, type }])));
    settingsList.catch(() => (settingsList = undefined));
    return settingsList;
  };
  let facts: Promise<{ version: string; timezone: string }> | undefined;
  const engineFacts = () => {
    facts ??= deps.clickhouse
      .query({ query: 'SELECT version() AS version, timezone() AS timezone', format: 'JSONEachRow' })
      .then((r) => r.json<{ version: string; timezone: string }>())
      .then(([row]) => row ?? { version: 'unknown', timezone: 'UTC' });
    facts.catch(() => (facts = undefined));
    return facts;
  };

  return async (req, res, path) => {
    const target = requestTarget(req.url);
    // Echoed in a header: an id that a header cannot carry (a line break, a control byte) is replaced.
    const given = target?.searchParams.get('query_id') ?? '';
    const queryId = /^[\x21-\x7e]{1,256}$/.test(given) ? given : randomUUID();
    res.setHeader('X-ClickHouse-Query-Id', queryId);
    res.setHeader('X-ClickHouse-Server-Display-Name', 'feedback-service');
    let compress: Compression | undefined;
    /** compress=1, once the caller is known: from then on a server writes errors compressed too. */
    let native = false;
    try {
      if (path === '/ping' || path === '/replicas_status') return answerText(res, 200, req.method === 'HEAD' ? '' : 'Ok.\n');
      if (path !== '/' && path !== '') {
        return answerText(
          res,
          404,
          `There is no handle ${path}\n\nUse / or /ping for health checks.\nSend queries with POST method or GET /?query=...\n`,
        );
      }
      if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'HEAD') {
        return answerText(res, 405, `HTTP method ${req.method} is not allowed: use GET or POST\n`);
      }
      if (!target) throw chError(CH.BAD_ARGUMENTS, 'Cannot parse the request target (its path or query string)');
      const url = target;
      // A request without a query at all is a health check, as on a server.
      if (req.method !== 'POST' && !url.searchParams.has('query')) return answerText(res, 200, 'Ok.\n');
      const wantsCompression = /^(1|true)$/i.test(url.searchParams.get('enable_http_compression') ?? '');
      compress = wantsCompression ? compressionFor(req.headers['accept-encoding']) : undefined;
      const request = parseRequest(req, url);

      // Who: the failed-authentication budget of the address (the API's), then the credential.
      const ip = clientIp(
        { req, get: (name: string) => String(req.headers[name.toLowerCase()] ?? '') } as never,
        rateLimits.trustedProxyHops,
      );
      const failures = rateLimits.authFailures;
      if (failures) {
        const spent = await failures.spent(ip);
        if (spent) {
          const retry = Math.max(1, Math.ceil(spent.msBeforeReset / 1000));
          throw chError(
            CH.QUOTA_EXCEEDED,
            `Too many failed authentications from this address (at most ${failures.describe()}); retry in ${retry} s`,
            {
              'Retry-After': String(retry),
            },
          );
        }
      }
      const credential =
        isUuid(request.user) && request.password !== ''
          ? await useClickhouseCredential(sql, { projectId: request.user, passwordHash: hashSecret(request.password) })
          : null;
      if (!credential) {
        await failures?.consume(ip);
        throw chError(
          CH.AUTHENTICATION_FAILED,
          `${request.user}: Authentication failed: password is incorrect, or there is no user with such name`,
        );
      }
      const charge = await rateLimits.api?.consume(`clickhouse-credential:${credential.id}`);
      if (charge && !charge.allowed) {
        const retry = Math.max(1, Math.ceil(charge.msBeforeReset / 1000));
        throw chError(
          CH.QUOTA_EXCEEDED,
          `Quota for this credential is exceeded: at most ${rateLimits.api?.describe()} requests; retry in ${retry} s`,
          {
            'Retry-After': String(retry),
          },
        );
      }
      noteCredential(res, credential.id, credential.project_id);
      native = request.compress;
      const settings = judgeSettings(request.settings, limits, await currentSettings());
      const project = await findProject(sql, credential.project_id);
      if (!project)
        throw chError(
          CH.AUTHENTICATION_FAILED,
          `${request.user}: Authentication failed: password is incorrect, or there is no user with such name`,
        );
      if (project.suspended) throw chError(CH.ACCESS_DENIED, `${request.user}: the project is suspended`);

      const { version, timezone } = await engineFacts();
      const database = config.clickhouseUrl ? serverDatabase(config.clickhouseUrl) : 'default';
      if (request.database !== undefined && request.database !== database) {
        throw chError(CH.UNKNOWN_DATABASE, `Database ${request.database} does not exist`);
      }
      const query = await readQuery(req, url, request.decompress);
      if (query.trim() === '') throw chError(CH.SYNTAX_ERROR, 'Empty query');
      const { scope } = projectSqlScope(project, {});
      const client = new AbortController();
      res.once('close', () => {
        if (!res.writableFinished) client.abort();
      });
      const defaultFormat = request.defaultFormat ?? 'TabSeparated';
      let stream: Awaited<ReturnType<typeof queries.stream>>;
      const started = process.hrtime.bigint();
      // currentUser() answers the credential's username, bound as a parameter the service owns.
      const params = { ...request.params, [CURRENT_USER_PARAM]: request.user };
      try {
        stream = await queries.stream(project.account_id, scope, query, params, {
          prepare: async (single, session, db) => {
            const prepared = noteStatement(
              res,
              await prepareInterfaceStatement(
                single,
                session,
                db,
                defaultFormat,
                await outputFormats(engineKey, session),
                request.user,
                await interfaceCatalogue(engineKey, session),
              ),
            );
            // Only the served formats reach the engine (ch-formats.ts says which, and why).
            if (!SERVED_OUTPUT_FORMATS.has(prepared.format))
              throw new ProjectQueryRefused(refusedFormatMessage(prepared.format), CH.UNKNOWN_FORMAT.code);
            return prepared;
          },
          settings: settings.engine,
          timeoutMs: settings.timeoutMs,
          maxRows: settings.maxRows,
          signal: client.signal,
        });
      } catch (error) {
        throw asClickhouseError(error);
      }

      noteProgress(res, stream.progress);
      // The first piece comes before the headers: an error until then gets its own status.
      const pieces = stream.pieces[Symbol.asyncIterator]();
      const held: Uint8Array[] = [];
      let heldBytes = 0;
      let ended = false;
      try {
        do {
          const next = await pieces.next();
          if (next.done) ended = true;
          else {
            held.push(next.value);
            heldBytes += next.value.byteLength;
          }
        } while (!ended && heldBytes < (settings.waitEndOfQuery ? WAIT_END_OF_QUERY_BYTES : RESPONSE_BUFFER_BYTES));
      } catch (error) {
        throw asClickhouseError(error);
      }
      if (heldBytes > limits.maxBytes) {
        await pieces.return?.(undefined);
        throw tooLarge(limits.maxBytes);
      }

      const tag = randomBytes(8).toString('hex');
      res.statusCode = 200;
      res.setHeader('Content-Type', contentTypeOf(stream.format));
      res.setHeader('X-ClickHouse-Format', stream.format);
      res.setHeader('X-ClickHouse-Timezone', settings.engine.session_timezone ?? timezone);
      res.setHeader('X-ClickHouse-Exception-Tag', tag);
      // What is known when the headers go: the final figures when the answer was held whole.
      const summary = JSON.stringify(summaryOf(stream.progress, process.hrtime.bigint() - started));
      if (settings.sendProgress) res.setHeader('X-ClickHouse-Progress', summary);
      res.setHeader('X-ClickHouse-Summary', summary);
      if (compress) res.setHeader('Content-Encoding', compress.encoding);
      const maxBytes = limits.maxBytes;
      /** True while the query's stream may still yield: leaving before that cancels it. */
      let open = !ended;
      async function* body(): AsyncGenerator<Uint8Array> {
        let sent = heldBytes;
        try {
          yield* held;
          held.length = 0;
          while (open) {
            const next = await pieces.next().catch((error: unknown) => {
              open = false; // it failed, and has closed its session
              throw error;
            });
            if (next.done) {
              open = false;
              return;
            }
            sent += next.value.byteLength;
            if (sent > maxBytes) {
              yield midStreamException(tooLarge(maxBytes), tag, version);
              return;
            }
            yield next.value;
          }
        } catch (error) {
          // The client's going reaches here too (Readable.from throws its error into the generator).
          if (!open && !client.signal.aborted) yield midStreamException(asClickhouseError(error), tag, version);
        } finally {
          // Left early (the client went, or the bound): the query is cancelled and its session closed.
          if (open) await pieces.return?.(undefined);
        }
      }
      const source = Readable.from(body(), { objectMode: false });
      // compress=1 writes ClickHouse's blocks; HTTP compression, if asked too, wraps them, as on a server.
      const stages: NodeJS.ReadWriteStream[] = [];
      if (native) stages.push(nativeCompressor());
      if (compress) stages.push(compress.stream());
      await pipeline([source, ...stages, res]).catch((error: unknown) => {
        // The client went away: its query was cancelled by the signal.
        if (!client.signal.aborted) logger.warn({ err: error, queryId }, 'ClickHouse interface: answer cut');
      });
    } catch (error) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const failure = error instanceof ClickhouseError ? error : unexpected(error, logger, queryId);
      const version = (await engineFacts().catch(() => undefined))?.version ?? 'unknown';
      for (const [name, value] of Object.entries(failure.headers)) res.setHeader(name, value);
      res.setHeader('X-ClickHouse-Exception-Code', String(failure.code));
      const text = failure.body(version);
      answerText(res, failure.status, native ? await compressBlock(Buffer.from(text)) : text, compress);
    }
  };
}

function asClickhouseError(error: unknown): ClickhouseError {
  if (error instanceof ClickhouseError) return error;
  if (error instanceof ProjectQueryBusy) {
    return chError(CH.TOO_MANY_SIMULTANEOUS_QUERIES, `Too many simultaneous queries: ${error.message}`, {
      'Retry-After': String(error.retryAfterSeconds),
    });
  }
  if (error instanceof ProjectQueryRefused) return fromEngineMessage(error.message, error.code);
  const message = error instanceof Error ? error.message : String(error);
  if (/Code: \d+\. DB::Exception/.test(message)) return fromEngineMessage(message.split('\n')[0] ?? message, undefined);
  throw error;
}

function unexpected(error: unknown, logger: Logger, queryId: string): ClickhouseError {
  logger.error({ err: error, queryId }, 'ClickHouse interface: request failed');
  return chError(CH.UNKNOWN_EXCEPTION, 'Internal error of the service; the query id identifies it in the service log');
}

const tooLarge = (maxBytes: number) => chError(CH.TOO_MANY_ROWS_OR_BYTES, `Limit for result exceeded, max bytes: ${binaryBytes(maxBytes)}`);

/**
 * An error after the answer began, as ClickHouse 25.11+ writes it: framed by `__exception__` and the
 * response's X-ClickHouse-Exception-Tag, with the message's length, so clients can tell it from
 * data (@clickhouse/client parses it so).
 */
function midStreamException(error: ClickhouseError, tag: string, version: string): Buffer {
  const message = `${error.message} (version ${version})\n`;
  return Buffer.from(`\r\n__exception__\r\n${tag}\r\n${message}${Buffer.byteLength(message)} ${tag}\r\n__exception__\r\n`);
}

type Compression = { encoding: string; stream: () => NodeJS.ReadWriteStream };

/** The response encoding of enable_http_compression=1, by Accept-Encoding: gzip, deflate or br. */
function compressionFor(accept: string | undefined): Compression | undefined {
  const wanted = (accept ?? '').toLowerCase();
  if (/\bgzip\b/.test(wanted)) return { encoding: 'gzip', stream: () => createGzip({ level: 3 }) };
  if (/\bdeflate\b/.test(wanted)) return { encoding: 'deflate', stream: () => createDeflate({ level: 3 }) };
  if (/\bbr\b/.test(wanted))
    return { encoding: 'br', stream: () => createBrotliCompress({ params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }) };
  return undefined;
}

function answerText(res: ServerResponse, status: number, text: string | Buffer, compress?: Compression): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=UTF-8');
  if (!compress) {
    res.end(text);
    return;
  }
  res.setHeader('Content-Encoding', compress.encoding);
  const stream = compress.stream();
  stream.pipe(res);
  stream.end(text);
}

/**
 * The interface on a port of its own (CLICKHOUSE_INTERFACE_PORT), at `/`, for tools that cannot
 * take a path; the API's timeouts against slow and idle connections apply.
 */
export function createClickhouseServer(handler: ClickhouseHandler, timeouts: Config['http'], logger?: Logger): Server {
  const server = createServer(
    { requestTimeout: timeouts.requestTimeoutMs, headersTimeout: timeouts.headersTimeoutMs },
    // A target that cannot be read still reaches the handler, which answers it in ClickHouse's form.
    guardedListener((req, res) => handler(req, res, requestTarget(req.url)?.pathname ?? '/'), logger, 'ClickHouse interface'),
  );
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  return server;
}

/** The database of a CLICKHOUSE_URL (its path, as @clickhouse/client reads it), else `default`. */
function serverDatabase(url: string): string {
  const name = decodeURIComponent(new URL(url).pathname.replace(/^\/+|\/+$/g, ''));
  return name === '' ? 'default' : name;
}
