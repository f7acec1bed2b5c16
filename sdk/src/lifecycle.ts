/** What a lifecycle adapter calls: the app goes to the background (or the page away), or comes back. */
export type LifecycleHandlers = {
  /** `unloading`: the page may be gone before an answer arrives (fetch keepalive, plain body). */
  background(unloading: boolean): void;
  foreground(): void;
};

/** Tells the client when to send before the app may be suspended or closed. Returns the unsubscribe. */
export interface Lifecycle {
  subscribe(handlers: LifecycleHandlers): () => void;
}

type EventTargetLike = {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
};

/**
 * Browsers: `visibilitychange` to hidden and `pagehide` send what is queued with keepalive (the
 * last moment a page is sure to run: mobile browsers never fire `unload` when they discard a tab);
 * `online` and becoming visible again retry at once instead of waiting for the backoff.
 */
export function browserLifecycle(): Lifecycle | undefined {
  const win = globalThis as unknown as EventTargetLike & { document?: EventTargetLike & { visibilityState?: string } };
  const doc = win.document;
  if (!doc || typeof win.addEventListener !== 'function') return undefined;
  return {
    subscribe(handlers) {
      const onVisibility = () => (doc.visibilityState === 'hidden' ? handlers.background(true) : handlers.foreground());
      const onPageHide = () => handlers.background(true);
      const onOnline = () => handlers.foreground();
      doc.addEventListener('visibilitychange', onVisibility);
      win.addEventListener('pagehide', onPageHide);
      win.addEventListener('online', onOnline);
      return () => {
        doc.removeEventListener('visibilitychange', onVisibility);
        win.removeEventListener('pagehide', onPageHide);
        win.removeEventListener('online', onOnline);
      };
    },
  };
}
