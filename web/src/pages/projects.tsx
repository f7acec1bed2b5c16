import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import { InstallSnippet } from '../components/install-snippet';
import { Page } from '../components/layout';
import { Empty, FailureNotice, Loading, OneTimeSecret } from '../components/states';
import { formatDate } from '../lib/format';
import { loadProjects, type Project, refreshProjects } from '../lib/projects';
import { useAction } from '../lib/use-action';
import { useResource } from '../lib/use-resource';

const PROJECT_LIMITS = 'Free includes 1 project, Pro 2, Team any number.';

export function ProjectsPage() {
  const projects = useResource(() => loadProjects(), []);
  const [name, setName] = useState('');
  const { busy, failure, run } = useAction();
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  // Shown after a project is created, until dismissed: how an app sends it feedback and events.
  const [install, setInstall] = useState<{ id: string; name: string; apiKey: string; publishableKey: string } | null>(null);

  /** Runs one change, then reloads the list (and the header's names). */
  const act = async (change: () => Promise<void>) => {
    await run(async () => {
      await change();
      refreshProjects();
      projects.reload();
    });
  };

  const create = (event: Event) => {
    event.preventDefault();
    return act(async () => {
      const project = await unwrap(api.POST('/projects', { body: { name: name.trim() } }));
      setSecret({ label: `API key of ${project.name}`, value: project.api_key });
      setInstall({ id: project.id, name: project.name, apiKey: project.api_key, publishableKey: project.publishable_key });
      setName('');
    });
  };

  const rotate = (project: Project) => {
    if (!window.confirm(`Rotate the API key of ${project.name}? The current key stops working at once.`)) return;
    return act(async () => {
      const updated = await unwrap(api.POST('/projects/{id}/api-keys', { params: { path: { id: project.id } } }));
      setSecret({ label: `New API key of ${updated.name}`, value: updated.api_key });
      setInstall(null);
    });
  };

  const setArchived = (project: Project, archived: boolean) => {
    if (archived && !window.confirm(`Archive ${project.name}? Its feedback becomes read-only for your users.`)) return;
    return act(async () => {
      await unwrap(api.PATCH('/projects/{id}', { params: { path: { id: project.id } }, body: { archived } }));
    });
  };

  return (
    <Page title="Projects">
      {secret && <OneTimeSecret label={secret.label} value={secret.value} onDone={() => setSecret(null)} />}
      {install && (
        <InstallSnippet
          projectId={install.id}
          projectName={install.name}
          apiKey={install.apiKey}
          publishableKey={install.publishableKey}
          onDone={() => setInstall(null)}
        />
      )}
      <form class="card inline-form" onSubmit={create}>
        <h2>New project</h2>
        <div class="field-row">
          <label for="project-name">Name</label>
          <input id="project-name" required maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled={busy || name.trim() === ''}>
            Create project
          </button>
        </div>
        <p class="muted">{PROJECT_LIMITS}</p>
      </form>
      {failure && <FailureNotice failure={failure} planHint={PROJECT_LIMITS} />}
      {projects.state === 'failed' && <FailureNotice failure={projects.failure} onRetry={projects.reload} />}
      {projects.state === 'loading' && !projects.data && <Loading what="projects" />}
      {projects.data && projects.data.length === 0 && <Empty>No project yet: create the first one above.</Empty>}
      {projects.data && projects.data.length > 0 && (
        <ul class="project-list">
          {projects.data.map((project) => (
            <li class="card project-card" key={project.id}>
              <div class="project-card-head">
                <h2>
                  <a href={`/projects/${project.id}/feedback`}>{project.name}</a>
                </h2>
                {project.archived && <span class="badge badge-muted">archived</span>}
                {project.suspended && <span class="badge badge-danger">suspended by the operator</span>}
              </div>
              <p class="muted project-facts">
                <span>Created {formatDate(project.created_at)}</span>
                <span>
                  id <code class="project-id">{project.id}</code>
                </span>
              </p>
              <nav aria-label={`${project.name} pages`} class="link-row">
                <a href={`/projects/${project.id}/feedback`}>Feedback</a>
                <a href={`/projects/${project.id}/metrics`}>Metrics</a>
                <a href={`/projects/${project.id}/users`}>SDK users</a>
                <a href={`/projects/${project.id}/settings`}>Settings</a>
              </nav>
              <div class="button-row">
                <button type="button" onClick={() => rotate(project)} disabled={busy || project.suspended}>
                  Rotate API key
                </button>
                <button type="button" onClick={() => setArchived(project, !project.archived)} disabled={busy}>
                  {project.archived ? 'Unarchive' : 'Archive'}
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
    </Page>
  );
}
