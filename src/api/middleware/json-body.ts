import bodyParser from 'koa-bodyparser';
import { AppError } from '../errors.js';

/**
 * The JSON body parser of a route, with its refusals in the SPEC 7.1 body. Compressed bodies
 * (`Content-Encoding: gzip`, which SDKs send on /events/track and /events/batch) are inflated as a
 * stream (co-body through `inflation`), and the limit counts the inflated bytes as they come out:
 * reading stops at the limit, so a small body that would inflate to gigabytes costs at most the
 * limit and gets 413 (test/api/protocol.test.ts measures it). A plain JSON body takes the same path
 * as before: nothing here runs unless the parser fails.
 */
/** The body limits, counted after decompression: JSON bodies, and SDK batches (larger than any other). */
export const BODY_LIMIT_BYTES = 1024 * 1024;
export const BATCH_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

export function jsonBody(limitBytes: number) {
  return bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    onerror: (error, ctx) => {
      const failure = error as { status?: number; code?: unknown };
      const encoding = ctx.get('content-encoding').toLowerCase() || 'identity';
      if (failure.status === 413) {
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
    },
  });
}
