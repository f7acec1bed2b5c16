import { safeStorage } from '../lib/safe-storage';

/**
 * Who the visitor of the widget or the board is (docs/widget.md, "Identity"):
 * - identified: a user token signed by the host app's server (HS256 JWT). It lives only in this
 *   module's memory (the board also keeps it in sessionStorage for its own tab), never in a URL;
 *   the service verifies it on every write, and its `sub` is the userId the bodies must carry;
 * - anonymous: where the owner allows it, an `anon-<random>` id kept in localStorage (in memory
 *   for this page's life where the browser denies storage to a frame of another site);
 * - nobody: reads only.
 */

export type Visitor = { kind: 'identified'; userId: string; token: string } | { kind: 'anonymous'; userId: string } | { kind: 'reader' };

let token: string | null = null;
const listeners = new Set<() => void>();

/** The `sub` claim, read without verifying: the service verifies; this only fills in bodies. */
export function tokenSubject(jwt: string): string | null {
  const payload = jwt.split('.')[1];
  if (!payload) return null;
  try {
    const json = JSON.parse(atob(payload.replace(/-/g, '+').replace(/_/g, '/'))) as { sub?: unknown };
    return typeof json.sub === 'string' && json.sub !== '' ? json.sub : null;
  } catch {
    return null;
  }
}

export function setToken(next: string | null) {
  token = next && tokenSubject(next) ? next : null;
  for (const listener of listeners) listener();
}

export function currentToken(): string | null {
  return token;
}

export function onVisitorChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

const ANONYMOUS_ID_KEY = 'feedback-anonymous-id';
const browserStorage = safeStorage('localStorage');

/** One id per browser, so an anonymous visitor's own votes stay marked across visits. */
export function anonymousId(): string {
  const stored = browserStorage.get(ANONYMOUS_ID_KEY);
  if (stored && /^anon-[0-9a-z-]{8,64}$/.test(stored)) return stored;
  const fresh = `anon-${crypto.randomUUID()}`;
  browserStorage.set(ANONYMOUS_ID_KEY, fresh);
  return fresh;
}

export function currentVisitor(anonymousAllowed: boolean): Visitor {
  const userId = token ? tokenSubject(token) : null;
  if (token && userId) return { kind: 'identified', userId, token };
  if (anonymousAllowed) return { kind: 'anonymous', userId: anonymousId() };
  return { kind: 'reader' };
}
