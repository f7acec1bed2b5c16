import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from '../api/failure';

export type Resource<T> =
  | { state: 'loading'; data?: T; failure?: undefined; reload: () => void }
  | { state: 'ready'; data: T; failure?: undefined; reload: () => void }
  | { state: 'failed'; data?: T; failure: ApiFailure; reload: () => void };

/**
 * Loads `load()` whenever `deps` change and on reload(); an answer that arrives after a newer
 * request started is dropped, so a fast filter change never shows stale rows.
 */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [result, setResult] = useState<{ state: 'loading' | 'ready' | 'failed'; data?: T; failure?: ApiFailure }>({ state: 'loading' });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  useEffect(() => {
    const ticket = ++latest.current;
    setResult((previous) => ({ state: 'loading', data: previous.data }));
    load().then(
      (data) => {
        if (ticket === latest.current) setResult({ state: 'ready', data });
      },
      (error: unknown) => {
        if (ticket !== latest.current) return;
        const failure = ApiFailure.of(error);
        setResult({ state: 'failed', failure });
      },
    );
    // `load` is a new closure each render; `deps` say when its result changes.
  }, [...deps, generation]);

  return { ...result, reload } as Resource<T>;
}
