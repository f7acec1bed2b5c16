// What every entry point exports besides its module-level API.
export type * from './api-types.js';
export { FeedbackClient, type FeedbackOptions, type FeedbackStats, type TrackOptions } from './client.js';
export { type DropCode, type DropCounts, FeedbackDropError } from './drops.js';
export { FeedbackApiError, FeedbackNetworkError, isRetryable } from './errors.js';
export type { Lifecycle, LifecycleHandlers } from './lifecycle.js';
export type { QueuedEvent } from './queue.js';
export { memoryStorage, type StorageAdapter } from './storage.js';
export type { Compressor, FetchLike, ResponseLike } from './transport.js';
