import { API_BASE } from '../api/client';
import { CopyButton } from './states';

/**
 * How to call the service from an app right after creating a project: two curl commands with the
 * new key, one that sends feedback (SPEC 4.2) and one that tracks an event. curl is what every
 * platform has today; our SDK's snippet takes its place once the SDK ships (docs/dashboard.md).
 */
export function InstallSnippet({ projectName, apiKey, onDone }: { projectName: string; apiKey: string; onDone: () => void }) {
  const base = `${window.location.origin}${API_BASE}`;
  const snippet = [
    '# Send a feedback item from your app',
    `curl -X POST ${base}/feedbacks \\`,
    `  -H 'X-API-Key: ${apiKey}' -H 'Content-Type: application/json' \\`,
    `  -d '{"title":"Dark mode","description":"Please add a dark theme.","category":"feature_request","userId":"user-1"}'`,
    '',
    '# Track an event (the metrics page counts it)',
    `curl -X POST ${base}/events/track \\`,
    `  -H 'X-API-Key: ${apiKey}' -H 'Content-Type: application/json' \\`,
    `  -d '{"eventName":"feedback_list","userId":"user-1"}'`,
  ].join('\n');
  return (
    <section class="card install" aria-labelledby="install-heading">
      <h2 id="install-heading">Connect your app to {projectName}</h2>
      <p>
        Your app calls the API with the project’s key in the <code>X-API-Key</code> header. Try it from a terminal: the feedback appears in
        the inbox at once, the event on the metrics page within seconds.
      </p>
      <pre class="snippet" data-testid="install-snippet">
        <code>{snippet}</code>
      </pre>
      <p class="secret-row">
        <CopyButton text={snippet} />
        <button type="button" onClick={onDone}>
          Hide
        </button>
      </p>
      <p class="muted">
        The full walk-through, with votes, comments and user registration, is in the API guide (<code>docs/api-guide.md</code>); the API’s
        description is served at <a href="/docs">/docs</a>.
      </p>
    </section>
  );
}
