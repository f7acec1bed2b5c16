/**
 * The signed-in token (the account's admin token or a member's), kept in this tab's session
 * storage only: it is gone when the tab closes, never in a URL, a cookie or a log. No project API
 * key is kept: every page works with the token (comments too, since the owner routes for them).
 */
const TOKEN_KEY = 'feedback-dashboard.token';
/** Where an earlier version kept API keys; still cleared on sign-out, so none outlives a session. */
const API_KEY_PREFIX = 'feedback-dashboard.api-key.';

type Listener = () => void;
const listeners = new Set<Listener>();

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // storage disabled: the token lives only as long as the page
  }
}

let memoryToken: string | null = null;
/** Why the last session ended without the owner signing out; shown on the sign-in page. */
let endedBecause: string | null = null;

export const session = {
  token(): string | null {
    return storage()?.getItem(TOKEN_KEY) ?? memoryToken;
  },
  signIn(token: string) {
    endedBecause = null;
    memoryToken = token;
    storage()?.setItem(TOKEN_KEY, token);
    for (const listener of listeners) listener();
  },
  /** Forgets the token and every API key of this tab. */
  signOut() {
    endedBecause = null;
    memoryToken = null;
    const store = storage();
    if (store) {
      for (const key of Object.keys(store)) {
        if (key === TOKEN_KEY || key.startsWith(API_KEY_PREFIX)) store.removeItem(key);
      }
    }
    for (const listener of listeners) listener();
  },
  /** The service refused the token: sign out, remembering why for the sign-in page. */
  expire() {
    this.signOut();
    // Set after signOut (which clears it); the sign-in page renders after this returns.
    endedBecause = 'The service no longer accepts this token. Sign in again.';
  },
  /** Why the last session expired, until the next sign-in (a remounted sign-in page shows it too). */
  endReason(): string | null {
    return endedBecause;
  },
  onChange(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};
