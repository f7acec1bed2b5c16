/**
 * @feedback/sdk for Node 18+: the queue in memory unless `storage` is given, gzip through zlib.
 * Call `shutdown()` before the process exits: the SDK's timers do not keep Node running.
 */
import { gzip } from 'node:zlib';
import { singletonApi } from './sdk.js';
import type { Compressor } from './transport.js';

export * from './public.js';

const zlibGzip: Compressor = (text) =>
  new Promise((resolve, reject) => gzip(text, (error, result) => (error ? reject(error) : resolve(new Uint8Array(result)))));

export const { init, identify, track, flush, shutdown, listFeedback, createFeedback, getFeedback, vote, unvote, listComments, addComment } =
  singletonApi(() => ({ compress: zlibGzip }));

/** Node's defaults, for `new FeedbackClient(options, nodeDefaults)`. */
export const nodeDefaults = { compress: zlibGzip };
