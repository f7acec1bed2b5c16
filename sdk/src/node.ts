/**
 * @feedback/sdk for Node 18+: the queue in memory unless `storage` is given, gzip through zlib,
 * and delivery before the process ends on its own (`beforeExit`). A process ended by a signal
 * never gets a `beforeExit`: call `shutdown()` in its signal handler.
 */
import { gzip } from 'node:zlib';
import type { PlatformDefaults } from './client.js';
import { singletonApi } from './sdk.js';
import type { Compressor } from './transport.js';

export * from './public.js';

const zlibGzip: Compressor = (text) =>
  new Promise((resolve, reject) => gzip(text, (error, result) => (error ? reject(error) : resolve(new Uint8Array(result)))));

/** The clients waiting for the process's end: one `beforeExit` listener for all of them. */
const exitHandlers = new Set<() => void>();
function onBeforeExit(handler: () => void): () => void {
  if (exitHandlers.size === 0) process.on('beforeExit', runExitHandlers);
  exitHandlers.add(handler);
  return () => {
    exitHandlers.delete(handler);
    if (exitHandlers.size === 0) process.off('beforeExit', runExitHandlers);
  };
}
function runExitHandlers(): void {
  for (const handler of exitHandlers) handler();
}

/** Node's defaults, for `new FeedbackClient(options, nodeDefaults)`. */
export const nodeDefaults: PlatformDefaults = { compress: zlibGzip, beforeExit: onBeforeExit };

export const { init, identify, track, flush, shutdown, listFeedback, createFeedback, getFeedback, vote, unvote, listComments, addComment } =
  singletonApi(() => nodeDefaults);
