/**
 * Where the queue survives a restart of the app. Shaped like both `localStorage` (synchronous)
 * and React Native's `AsyncStorage` (promises), so either is passed as it is.
 */
export interface StorageAdapter {
  getItem(key: string): string | null | Promise<string | null>;
  setItem(key: string, value: string): void | Promise<void>;
  removeItem(key: string): void | Promise<void>;
}

/** Keeps nothing beyond the process: the default in Node, and the fallback where no storage works. */
export function memoryStorage(): StorageAdapter {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

/** The browser's localStorage, when the page may use it (Safari's private mode and sandboxed frames throw). */
export function browserStorage(): StorageAdapter | undefined {
  try {
    const storage = (globalThis as { localStorage?: StorageAdapter }).localStorage;
    if (!storage) return undefined;
    const probe = '__feedback_probe__';
    storage.setItem(probe, '1');
    storage.removeItem(probe);
    return storage;
  } catch {
    return undefined;
  }
}
