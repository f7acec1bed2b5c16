import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { GUIDES } from '../lib/guides';
import { refreshProjects } from '../lib/projects';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';
import { ScrollRegion } from './scroll-region';
import { CopyButton, FailureNotice, Loading, OneTimeSecret } from './states';

/**
 * The settings of the widget and the public board (docs/widget.md): the publishable key
 * (rotate), the identity secret (create or rotate, shown once), the switches, the allowed
 * origins, the snippet to paste, and how the app's server signs a user token.
 */
type Project = Schemas['Project'] & { allowed_origins?: string[] };
type Switch = 'require_signed_identity' | 'board_public' | 'anonymous_feedback';

const SWITCHES: [Switch, string, string][] = [
  [
    'require_signed_identity',
    'Require signed identity',
    'Every vote, comment, submission and registration needs a user token signed by your server.',
  ],
  ['board_public', 'Public board', 'Anyone can read the board at its address; identified users (or anonymous visitors, below) can act.'],
  [
    'anonymous_feedback',
    'Anonymous feedback',
    'Visitors without a token may vote, comment and submit on the board, limited per address; their submissions wait for your approval.',
  ],
];

export function WebSettings({ projectId }: { projectId: string }) {
  const loaded = useResource(() => unwrap(api.GET('/projects/{id}', { params: { path: { id: projectId } } })), [projectId]);
  const [project, setProject] = useState<Project | null>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const [origins, setOrigins] = useState('');
  const { busy, failure, run: runAction } = useAction();
  useEffect(() => {
    if (!loaded.data) return;
    setProject(loaded.data as Project);
    setOrigins(((loaded.data as Project).allowed_origins ?? []).join('\n'));
  }, [loaded.data]);

  const run = async (change: () => Promise<Project>) => {
    await runAction(async () => {
      setProject(await change());
      refreshProjects();
    });
  };
  const path = { params: { path: { id: projectId } } };
  // allowed_origins is sent only where the service knows it (the project shows the field).
  const patch = (body: Record<string, unknown>) =>
    run(() => unwrap(api.PATCH('/projects/{id}', { ...path, body: body as Schemas['UpdateProjectRequest'] })) as Promise<Project>);
  // Shown switched at once (a controlled checkbox would spring back while the PATCH runs); the
  // answer, or the stored project after a failure, is what stays.
  const toggle = (name: Switch, on: boolean) => {
    setProject((current) => current && { ...current, [name]: on });
    return run(
      () =>
        unwrap(api.PATCH('/projects/{id}', { ...path, body: { [name]: on } as Schemas['UpdateProjectRequest'] })).catch(
          (error: unknown) => {
            loaded.reload();
            throw error;
          },
        ) as Promise<Project>,
    );
  };
  const rotateKey = () => {
    if (!window.confirm('Rotate the publishable key? Pages that embed the old key stop working until you update the snippet.')) return;
    return run(() => unwrap(api.POST('/projects/{id}/publishable-key', path)) as Promise<Project>);
  };
  const replaceSecret = () => {
    if (
      project?.has_identity_secret &&
      !window.confirm('Rotate the identity secret? Tokens signed with the current one stop working at once.')
    )
      return;
    return run(async () => {
      const result = await unwrap(api.POST('/projects/{id}/identity-secret', path));
      setSecret(result.identity_secret);
      return result as Project;
    });
  };

  if (loaded.state === 'failed' && !project) return <FailureNotice failure={loaded.failure} onRetry={loaded.reload} />;
  if (!project) return <Loading what="widget settings" />;
  const service = window.location.origin;
  const snippet = `<script src="${service}/widget.js" data-key="${project.publishable_key}" async></script>
<script src="/feedback-setup.js"></script>`;
  const setup = `// feedback-setup.js: served by your app (no inline script needed)
window.Feedback = window.Feedback || function () { (Feedback.q = Feedback.q || []).push(arguments); };
Feedback('identify', { token: USER_TOKEN_FROM_YOUR_SERVER });
document.querySelector('#feedback-button').addEventListener('click', () => Feedback('open'));`;
  const node = `import { SignJWT } from 'jose';

const secret = new TextEncoder().encode(process.env.FEEDBACK_IDENTITY_SECRET);
const token = await new SignJWT({ email: user.email, mrr: user.monthlyRevenue })
  .setProtectedHeader({ alg: 'HS256' })
  .setSubject(user.id)
  .setExpirationTime('7d') // at most 30 days
  .sign(secret);`;
  const python = `import os, time, jwt  # pip install PyJWT

token = jwt.encode(
    {"sub": user.id, "email": user.email, "mrr": user.monthly_revenue,
     "exp": int(time.time()) + 7 * 86400},  # at most 30 days
    os.environ["FEEDBACK_IDENTITY_SECRET"],
    algorithm="HS256",
)`;

  return (
    <section class="card" aria-labelledby="widget-heading">
      <h2 id="widget-heading">Widget and public board</h2>
      <p class="muted">
        Let your users give feedback from your web pages without building any UI. Every setting is explained in{' '}
        <a href={GUIDES.widget} target="_blank" rel="noopener">
          the widget guide (docs/widget.md)
        </a>
        .
      </p>
      {secret && <OneTimeSecret label="Identity secret" value={secret} onDone={() => setSecret(null)} />}

      <h3>Publishable key</h3>
      <p class="secret-row">
        <code class="break">{project.publishable_key}</code>
        <CopyButton text={project.publishable_key} />
        <button type="button" onClick={rotateKey} disabled={busy}>
          Rotate key
        </button>
      </p>

      <h3>Identity secret</h3>
      <p class="muted">
        Your server signs user tokens with it (HS256). {project.has_identity_secret ? 'A secret is set.' : 'No secret yet.'}
      </p>
      <button type="button" onClick={replaceSecret} disabled={busy}>
        {project.has_identity_secret ? 'Rotate secret' : 'Create secret'}
      </button>

      <h3>Access</h3>
      {SWITCHES.map(([name, label, help]) => (
        <div class="field switch-field" key={name}>
          <label>
            <input
              type="checkbox"
              checked={project[name]}
              disabled={busy}
              onChange={(event) => toggle(name, event.currentTarget.checked)}
            />{' '}
            {label}
          </label>
          <p class="muted">{help}</p>
        </div>
      ))}
      {project.board_public && (
        <p>
          Board: <a href={`/board/${project.slug}`}>{`${service}/board/${project.slug}`}</a>
        </p>
      )}
      {project.allowed_origins !== undefined && (
        <form
          class="field"
          onSubmit={(event) => {
            event.preventDefault();
            patch({ allowed_origins: origins.split(/\s+/).filter(Boolean) });
          }}
        >
          <label for="allowed-origins">Allowed origins (one a line; empty: any)</label>
          <textarea id="allowed-origins" rows={3} value={origins} onInput={(event) => setOrigins(event.currentTarget.value)} />
          <button type="submit" disabled={busy}>
            Save origins
          </button>
        </form>
      )}
      {failure && <FailureNotice failure={failure} />}

      <h3>Snippet</h3>
      <p class="muted">Paste it into your pages; your server puts a fresh user token where the setup script reads it.</p>
      <Code text={snippet} label="Snippet" />
      <Code text={setup} label="Setup script" />
      <h3>Signing a user token</h3>
      <Code text={node} label="Node (jose)" />
      <Code text={python} label="Python (PyJWT)" />
    </section>
  );
}

function Code({ text, label }: { text: string; label: string }) {
  return (
    <figure class="code-sample">
      <figcaption>
        {label} <CopyButton text={text} />
      </figcaption>
      <ScrollRegion label={label}>
        <pre>
          <code>{text}</code>
        </pre>
      </ScrollRegion>
    </figure>
  );
}
