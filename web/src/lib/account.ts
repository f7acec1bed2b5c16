import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { session } from './session';

export type Account = Schemas['SignedInAccount'];

export const PLAN_LABELS = { free: 'Free', pro: 'Pro', team: 'Team' } as const;

/**
 * The signed-in account and what its plan allows (GET /account), loaded once per sign-in: pages
 * explain a plan gate before the owner runs into a 402.
 */
let cache: Promise<Account> | null = null;
session.onChange(() => {
  cache = null;
});

function loadAccount(): Promise<Account> {
  cache ??= unwrap(api.GET('/account')).catch((error: unknown) => {
    cache = null;
    throw error;
  });
  return cache;
}

/** The account, or undefined while loading or when it could not be read (pages then fall back on the API's 402s). */
export function useAccount(): Account | undefined {
  const [account, setAccount] = useState<Account | undefined>(undefined);
  useEffect(() => {
    let live = true;
    loadAccount().then(
      (loaded) => {
        if (live) setAccount(loaded);
      },
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  return account;
}
