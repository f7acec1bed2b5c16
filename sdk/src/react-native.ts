/**
 * @feedback/sdk for React Native: pass `storage: AsyncStorage` (or any StorageAdapter) so the queue
 * survives the app being killed, and `lifecycle: appStateLifecycle(AppState)` so it is sent when
 * the app goes to the background. Gzip when the runtime has CompressionStream, else plain.
 */
import { compressionStreamGzip } from './compression.js';
import type { Lifecycle } from './lifecycle.js';
import { singletonApi } from './sdk.js';

export * from './public.js';

export const { init, identify, track, flush, shutdown, listFeedback, createFeedback, getFeedback, vote, unvote, listComments, addComment } =
  singletonApi(() => ({ compress: compressionStreamGzip }));

/** The part of React Native's AppState the SDK uses. */
export type AppStateLike = {
  addEventListener(type: 'change', listener: (state: string) => void): { remove(): void };
};

/**
 * Sends on every AppState change away from `active` (iOS may suspend the app seconds later), and
 * retries at once when it is active again.
 */
export function appStateLifecycle(appState: AppStateLike): Lifecycle {
  return {
    subscribe(handlers) {
      const subscription = appState.addEventListener('change', (state) =>
        state === 'active' ? handlers.foreground() : handlers.background(false),
      );
      return () => subscription.remove();
    },
  };
}
