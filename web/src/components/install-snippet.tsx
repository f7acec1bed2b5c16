import { GUIDES } from '../lib/guides';
import { CopyButton } from './states';

/**
 * How to connect an app right after creating a project, with the new keys filled in: our SDK
 * (sdk/README.md) for an app's code, with the project's API key, and the widget's snippet
 * (docs/widget.md) for its web pages, with the publishable key. The API key is shown once; the
 * publishable key stays on the settings page, where the rest of the widget's setup is.
 */
export function InstallSnippet({
  projectId,
  projectName,
  apiKey,
  publishableKey,
  onDone,
}: {
  projectId: string;
  projectName: string;
  apiKey: string;
  publishableKey: string;
  onDone: () => void;
}) {
  const service = window.location.origin;
  const sdk = [
    "import { init, identify, track, createFeedback } from '@feedback/sdk';",
    '',
    `init({ apiKey: '${apiKey}', host: '${service}' });`,
    "await identify('user-1', { mrr: 29 });   // your app's user id (and its monthly revenue)",
    "track('signed_up', { plan: 'pro' });     // queued, batched, retried, stored once",
    "await createFeedback({ title: 'Dark mode', description: 'Please add a dark theme.', category: 'feature_request' });",
  ].join('\n');
  const widget = `<script src="${service}/widget.js" data-key="${publishableKey}" async></script>`;
  return (
    <section class="card install" aria-labelledby="install-heading">
      <h2 id="install-heading">Connect your app to {projectName}</h2>
      <h3>From your app’s code: the SDK</h3>
      <p>
        Install it from the service’s repository (<code>npm install &lt;repository&gt;/sdk</code>, see{' '}
        <a href={GUIDES.sdk} target="_blank" rel="noopener">
          the SDK’s guide (sdk/README.md)
        </a>
        ); it sends the API key for you. The feedback appears in the inbox at once, the events on the metrics page within seconds.
      </p>
      <pre class="snippet" data-testid="install-sdk">
        <code>{sdk}</code>
      </pre>
      <p class="secret-row">
        <CopyButton text={sdk} />
      </p>
      <h3>On your web pages: the widget</h3>
      <p>
        A feedback panel for your users, with the project’s publishable key (public by design). Your server signs a token for the signed-in
        user: the setup script and the signing code are in <a href={`/projects/${projectId}/settings`}>Settings</a>.
      </p>
      <pre class="snippet" data-testid="install-widget">
        <code>{widget}</code>
      </pre>
      <p class="secret-row">
        <CopyButton text={widget} />
        <button type="button" onClick={onDone}>
          Hide
        </button>
      </p>
      <p class="muted">
        Other languages call the API directly with the key in the <code>X-API-Key</code> header: its description is served at{' '}
        <a href="/docs">/docs</a>.
      </p>
    </section>
  );
}
