import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { FailureNotice } from '../components/states';
import { session } from '../lib/session';
import { useAction } from '../lib/use-action';

/** Only paths of this app: `next` comes from the URL, so it must not lead to another site. */
function safeNext(next: string | undefined): string {
  return next?.startsWith('/') && !next.startsWith('//') && !next.includes('\\') && !next.startsWith('/signin') ? next : '/projects';
}

export function SignInPage() {
  const { query, route } = useLocation();
  const [token, setToken] = useState('');
  const { busy, failure, run } = useAction();
  const ended = session.endReason();

  useEffect(() => {
    document.title = 'Sign in · Feedback dashboard';
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    const candidate = token.trim();
    if (!candidate) return;
    await run(async () => {
      // The token is checked before it is kept: the projects it can see prove it works.
      await unwrap(api.GET('/projects', { headers: { Authorization: `Bearer ${candidate}` } }));
      session.signIn(candidate);
      route(safeNext(query.next), true);
    });
  };

  return (
    <main id="main" class="sign-in">
      <form class="card sign-in-card" onSubmit={submit} aria-describedby="sign-in-help">
        <h1>Sign in</h1>
        <p id="sign-in-help" class="muted">
          Use your account's admin token, or the token you were given as a team member. It is kept in this browser tab only, and forgotten
          when you sign out or close the tab.
        </p>
        {ended && (
          <p class="notice notice-warn" role="alert">
            {ended}
          </p>
        )}
        <label for="token">Admin or member token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit" class="primary" disabled={busy}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {failure &&
          (failure.status === 401 ? (
            <p class="notice notice-error" role="alert">
              This token was not accepted: {failure.reason}.
            </p>
          ) : (
            <FailureNotice failure={failure} />
          ))}
      </form>
    </main>
  );
}
