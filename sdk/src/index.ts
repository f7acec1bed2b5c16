/**
 * @feedback/sdk for browsers (and any platform with fetch): the queue in localStorage, sent with
 * keepalive when the page is hidden, gzipped through CompressionStream.
 */
import { compressionStreamGzip } from './compression.js';
import { browserLifecycle } from './lifecycle.js';
import { singletonApi } from './sdk.js';
import { browserStorage } from './storage.js';

export { browserLifecycle } from './lifecycle.js';
export * from './public.js';

export const { init, identify, track, flush, shutdown, listFeedback, createFeedback, getFeedback, vote, unvote, listComments, addComment } =
  singletonApi(() => ({ storage: browserStorage(), lifecycle: browserLifecycle(), compress: compressionStreamGzip }));
