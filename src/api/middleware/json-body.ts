import type { IncomingMessage } from 'node:http';
import { brotliDecompressSync, unzipSync } from 'node:zlib';
import { parse as parseJsonSafely } from '@hapi/bourne';
import type { Middleware } from 'koa';
import bodyParser from 'koa-bodyparser';
import readRawBody from 'raw-body';
import { AppError } from '../errors.js';
import type { AppState } from '../state.js';

/**
 * The JSON body parser of a route, with its refusals in the SPEC 7.1 body. The limit counts the
 * decompressed bytes: a small body that would inflate to gigabytes costs at most the limit and
 * gets 413 (test/api/protocol.test.ts measures it).
 *
 * - A JSON body with `Content-Encoding: gzip`, `deflate` or `br` (SDKs send gzip on /events/track
 *   and /events/batch) is read whole as it came, at most the limit, and inflated in one call that
 *   stops at the limit. koa-bodyparser inflates through a zlib stream made per request, whose set-up
 *   and thread-pool round trips cost about 70 µs of CPU on a 600-byte SDK batch against about 10
 *   here (BENCHMARKS.md, "Issue 31: request cost"). The text is then parsed as co-body parses it
 *   (strict: an object or an array; `__proto__` keys refused, with @hapi/bourne).
 * - Everything else (plain JSON, other types, an unknown encoding and its 415) takes koa-bodyparser.
 */
/** The body limits, counted after decompression: JSON bodies, and SDK batches (larger than any other). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
export const BATCH_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export function jsonBody(limitBytes: number): Middleware<AppState> {
  const onerror = (error: unknown, ctx: { get(field: string): string }): never => {
    const failure = error as { status?: number; code?: unknown };
    const encoding = ctx.get('content-encoding').toLowerCase() || 'identity';
    if (failure.status === 413 || failure.code === 'ERR_BUFFER_TOO_LARGE') {
      throw new AppError(
        413,
        `body: too large: the limit is ${limitBytes} bytes (${limitBytes / 1024 / 1024} MiB)${encoding === 'identity' ? '' : ', decompressed'}`,
      );
    }
    if (failure.status === 415)
      throw new AppError(415, `Content-Encoding ${encoding} is not supported: send gzip (or deflate, br) or no encoding`);
    // zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR for a truncated stream) carry a Z_ code.
    if (typeof failure.code === 'string' && failure.code.startsWith('Z_')) {
      throw new AppError(400, `body: invalid ${encoding} data (Content-Encoding: ${encoding})`);
    }
    throw new AppError(400, 'body: invalid JSON');
  };
  const streamed = bodyParser({ enableTypes: ['json'], jsonLimit: `${limitBytes}b`, strict: true, onerror });
  return async (ctx, next) => {
    const encoding = ctx.req.headers['content-encoding'];
    // The same spellings inflation (koa-bodyparser's) accepts: exact, lower case.
    const inflate = encoding === undefined ? undefined : INFLATE[encoding];
    if (inflate === undefined || ctx.request.body !== undefined || !ctx.request.is('application/json')) return streamed(ctx, next);
    try {
      const text = utf8Text(inflate(await readCompressed(ctx.req, limitBytes), limitBytes));
      ctx.request.body = parseStrictJson(text);
      ctx.request.rawBody = text;
    } catch (error) {
      onerror(error, ctx);
    }
    await next();
  };
}

const INFLATE: Record<string, ((compressed: Buffer, limitBytes: number) => Buffer) | undefined> = {
  // createUnzip (inflation's, for both names) reads gzip and zlib-wrapped deflate alike; so does unzipSync.
  gzip: (compressed, limitBytes) => unzipSync(compressed, { maxOutputLength: limitBytes }),
  deflate: (compressed, limitBytes) => unzipSync(compressed, { maxOutputLength: limitBytes }),
  br: (compressed, limitBytes) => brotliDecompressSync(compressed, { maxOutputLength: limitBytes }),
};

/**
 * The compressed bytes, at most the limit (a body larger than its limit compressed is larger
 * still inflated, give or take a few bytes of framing): 413 past it, raw-body's 400 for an
 * aborted request.
 */
function readCompressed(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  return readRawBody(req, { limit: limitBytes });
}

/** UTF-8 as co-body decodes it (iconv-lite): invalid bytes become U+FFFD, a leading BOM is dropped. */
function utf8Text(bytes: Buffer): string {
  const text = bytes.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

// co-body's test: after JSON's whitespace (space, tab, LF, CR), an object or an array.
const STRICT_JSON = /^[ \t\n\r]*(\[|\{)/;

/** co-body's strict JSON: empty is `{}`, anything but an object or an array is refused, `__proto__` keys too. */
function parseStrictJson(text: string): unknown {
  if (text === '') return {};
  if (!STRICT_JSON.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
  return parseJsonSafely(text, { protoAction: 'error' });
}
