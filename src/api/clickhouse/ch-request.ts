import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { brotliDecompress, gunzip, inflate } from 'node:zlib';
import { CH, chError } from './ch-errors.js';
import { decompressBlocks } from './ch-native-compression.js';

/** Bytes of a query (URL parameter and body together, decompressed) at most: ClickHouse's max_query_size is 256 KiB of SQL. */
export const MAX_QUERY_BYTES = 1024 * 1024;

/** A request of the ClickHouse interface, as ClickHouse's HTTP handler reads it. */
export type ChRequest = {
  /** The query: the `query` parameter, then a line break, then the body, when both are given. */
  query: string;
  /** The user and password, from whichever of ClickHouse's three ways the request used. */
  user: string;
  password: string;
  database: string | undefined;
  defaultFormat: string | undefined;
  queryId: string | undefined;
  /** `param_<name>` values, by name. */
  params: Record<string, string>;
  /** Every other URL parameter: settings, judged by ch-settings.ts. */
  settings: Record<string, string>;
  /** compress=1: the answer in ClickHouse's compressed blocks (ch-native-compression.ts). */
  compress: boolean;
  /** decompress=1: the body comes in ClickHouse's compressed blocks. */
  decompress: boolean;
};

/** URL parameters of ClickHouse's HTTP handler that are not settings. */
const HANDLER_PARAMS = new Set([
  'query',
  'database',
  'default_format',
  'user',
  'password',
  'query_id',
  'quota_key',
  'session_id',
  'session_timeout',
  'session_check',
  'buffer_size',
  'stacktrace',
  'role',
  'compress',
  'decompress',
  'client_protocol_version',
  'close_session',
]);

/**
 * The URL of a request target as the interface reads it, or undefined when it cannot be read: any
 * target Node's parser passed (`//`, `*`, the absolute form `http://host/…`, raw bytes, a broken
 * percent-encoding) is read without throwing. `new URL(target, base)` alone takes `//x` for a host
 * and throws on `//`: that one line once ended the process.
 */
export function requestTarget(raw: string | undefined): URL | undefined {
  const target = raw ?? '/';
  try {
    if (/^https?:\/\//i.test(target)) return new URL(target);
    return new URL(`http://x${target.startsWith('/') ? '' : '/'}${target}`);
  } catch {
    return undefined;
  }
}

/** The credential of a request, in ClickHouse's precedence; `default` with no password when none is given, as a server reads it. */
function credentialOf(req: IncomingMessage, url: URL): { user: string; password: string } {
  const headerUser = req.headers['x-clickhouse-user'];
  const headerKey = req.headers['x-clickhouse-key'];
  const basic = /^Basic\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
  const ways = [
    headerUser !== undefined || headerKey !== undefined,
    basic !== undefined,
    url.searchParams.has('user') || url.searchParams.has('password'),
  ];
  if (ways.filter(Boolean).length > 1) {
    throw chError(
      CH.AUTHENTICATION_FAILED,
      'Invalid authentication: it is not allowed to use several of the methods: HTTP Basic authentication, the X-ClickHouse-User/X-ClickHouse-Key headers, and the user/password parameters',
    );
  }
  if (ways[0]) return { user: String(headerUser ?? 'default'), password: String(headerKey ?? '') };
  if (basic !== undefined) {
    const decoded = Buffer.from(basic, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon < 0 ? { user: decoded, password: '' } : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { user: url.searchParams.get('user') ?? 'default', password: url.searchParams.get('password') ?? '' };
}

/** Reads what the URL and headers give; the body is read later (readQuery), once the caller is known. */
export function parseRequest(req: IncomingMessage, url: URL): Omit<ChRequest, 'query'> {
  const { user, password } = credentialOf(req, url);
  const params: Record<string, string> = {};
  const settings: Record<string, string> = {};
  for (const [name, value] of url.searchParams) {
    if (name.startsWith('param_')) params[name.slice('param_'.length)] = unescapeParam(value);
    else if (!HANDLER_PARAMS.has(name)) settings[name] = value;
  }
  const header = (name: string) => {
    const value = req.headers[name];
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
  return {
    user,
    password,
    database: url.searchParams.get('database') ?? header('x-clickhouse-database'),
    defaultFormat: url.searchParams.get('default_format') ?? header('x-clickhouse-format'),
    queryId: url.searchParams.get('query_id') ?? undefined,
    params,
    settings,
    // A server reads these as booleans: 1 or true.
    compress: /^(1|true)$/i.test(url.searchParams.get('compress') ?? ''),
    decompress: /^(1|true)$/i.test(url.searchParams.get('decompress') ?? ''),
  };
}

const ESCAPES: Record<string, string> = { t: '\t', n: '\n', r: '\r', b: '\b', f: '\f', '0': '\0', a: '\x07', v: '\v' };

/**
 * A `param_<name>` value as ClickHouse reads it: in the Escaped text format (`\t`, `\n`, `\\`,
 * `\'`, …), which clients write (@clickhouse/client escapes quotes and backslashes so). The sandbox
 * binds plain text and escapes it itself (readonly-session.ts), so the value is unescaped here once.
 */
export function unescapeParam(value: string): string {
  return value.replace(/\\(.)/gs, (_, char: string) => ESCAPES[char] ?? char);
}

const decompressors: Record<string, (input: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>> = {
  gzip: promisify(gunzip) as never,
  'x-gzip': promisify(gunzip) as never,
  deflate: promisify(inflate) as never,
  br: promisify(brotliDecompress) as never,
};

/**
 * The query of a request: the `query` parameter, a line break, then the body (decompressed per
 * Content-Encoding, then from ClickHouse's compressed blocks with decompress=1), as ClickHouse joins them. GET and HEAD have no body. SYNTAX_ERROR past MAX_QUERY_BYTES.
 */
export async function readQuery(req: IncomingMessage, url: URL, nativeCompressed = false): Promise<string> {
  const param = url.searchParams.get('query');
  let body = '';
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_QUERY_BYTES)
        throw chError(CH.SYNTAX_ERROR, `Max query size exceeded: the query is larger than ${MAX_QUERY_BYTES} bytes`);
      chunks.push(chunk);
    }
    let raw: Buffer = Buffer.concat(chunks, size);
    const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding !== '' && encoding !== 'identity' && raw.length > 0) {
      const decompress = decompressors[encoding];
      if (!decompress) throw chError(CH.NOT_IMPLEMENTED, `Unknown HTTP Content-Encoding ${encoding}: gzip, deflate and br are accepted`);
      try {
        raw = await decompress(raw, { maxOutputLength: MAX_QUERY_BYTES });
      } catch (error) {
        throw chError(CH.CANNOT_DECOMPRESS, `Cannot decompress the request body (${encoding}): ${(error as Error).message}`);
      }
    }
    // decompress=1: ClickHouse's own blocks, inside any HTTP Content-Encoding, as a server reads them.
    if (nativeCompressed && raw.length > 0) raw = await decompressBlocks(raw, MAX_QUERY_BYTES);
    body = raw.toString('utf8');
  }
  if (param !== null && body !== '') return `${param}\n${body}`;
  return param ?? body;
}
