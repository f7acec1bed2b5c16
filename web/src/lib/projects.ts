import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import type { ApiFailure } from '../api/failure';
import { session } from './session';

export type Project = Schemas['Project'];

/**
 * The account's projects, loaded once per sign-in and shared by every page's header (names),
 * refreshed after a page changes one.
 */
let cache: Promise<Project[]> | null = null;
const subscribers = new Set<() => void>();
session.onChange(() => {
  cache = null;
});

export function loadProjects(): Promise<Project[]> {
  cache ??= unwrap(api.GET('/projects')).catch((error: unknown) => {
    cache = null;
    throw error;
  });
  return cache;
}

export function refreshProjects() {
  cache = null;
  for (const notify of subscribers) notify();
}

export function useProjects(): { data?: Project[]; failure?: ApiFailure } {
  const [state, setState] = useState<{ data?: Project[]; failure?: ApiFailure }>({});
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    const notify = () => setGeneration((g) => g + 1);
    subscribers.add(notify);
    return () => subscribers.delete(notify);
  }, []);
  useEffect(() => {
    let live = true;
    loadProjects().then(
      (data) => live && setState({ data }),
      (failure: ApiFailure) => live && setState({ failure }),
    );
    return () => {
      live = false;
    };
  }, [generation]);
  return state;
}
