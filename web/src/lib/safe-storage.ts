/**
 * Web storage that never throws. Browsers deny storage to a third-party frame (a board or the
 * widget's panel framed by another site, with third-party cookies blocked): reading
 * `window.sessionStorage` itself then throws a SecurityError, and so may getItem and setItem
 * (quota, private modes). Every value is also kept in this page's memory, so the page works for
 * as long as it is open and only loses what storage would have kept across loads.
 */
export type SafeStorage = {
  get(key: string): string | null;
  set(key: string, value: string): void;
  remove(key: string): void;
};

export function safeStorage(kind: 'localStorage' | 'sessionStorage'): SafeStorage {
  const memory = new Map<string, string>();
  const real = (): Storage | null => {
    try {
      return window[kind];
    } catch {
      return null;
    }
  };
  return {
    get(key) {
      try {
        const stored = real()?.getItem(key);
        if (stored !== null && stored !== undefined) return stored;
      } catch {
        // denied: the copy in memory is all there is
      }
      return memory.get(key) ?? null;
    },
    set(key, value) {
      memory.set(key, value);
      try {
        real()?.setItem(key, value);
      } catch {
        // denied or full: kept in memory only
      }
    },
    remove(key) {
      memory.delete(key);
      try {
        real()?.removeItem(key);
      } catch {
        // denied: nothing was stored there
      }
    },
  };
}
