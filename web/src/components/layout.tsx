import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { PLAN_LABELS, useAccount } from '../lib/account';
import { useProjects } from '../lib/projects';
import { session } from '../lib/session';

const PROJECT_PAGES = [
  { slug: 'feedback', label: 'Feedback' },
  { slug: 'users', label: 'SDK users' },
  { slug: 'metrics', label: 'Metrics' },
  { slug: 'funnels', label: 'Funnels' },
  { slug: 'retention', label: 'Retention' },
  { slug: 'paths', label: 'Paths' },
  { slug: 'live', label: 'Live' },
  { slug: 'sql', label: 'SQL console' },
  { slug: 'settings', label: 'Settings' },
] as const;

/** The path the last page was drawn for: focus moves to the new page's content on a navigation. */
let lastPath: string | null = null;

/** The frame of every signed-in page: header, the project's navigation, one h1, the content. */
export function Page({
  title,
  projectId,
  children,
  actions,
}: {
  title: string;
  projectId?: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  const { path, route } = useLocation();
  const projects = useProjects();
  const account = useAccount();
  const project = projectId ? projects.data?.find((p) => p.id === projectId) : undefined;
  useEffect(() => {
    document.title = project ? `${title} · ${project.name} · Feedback dashboard` : `${title} · Feedback dashboard`;
  }, [title, project?.name]);
  useEffect(() => {
    // A link followed inside the app loads no new document: move the focus (and a screen reader)
    // to the new page's content, as a page load would. Filters change the query, not the path.
    if (lastPath !== null && lastPath !== path) document.getElementById('main')?.focus();
    lastPath = path;
  }, [path]);

  const signOut = () => {
    session.signOut();
    route('/signin', true);
  };

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="/projects">
          Feedback dashboard
        </a>
        {projectId && (
          <nav aria-label="Project pages" class="project-nav">
            <a class="project-name" href="/projects" title={`${project?.name ?? 'Project'}: all projects`}>
              {project?.name ?? 'Project'}
            </a>
            <ul>
              {PROJECT_PAGES.map(({ slug, label }) => {
                const href = `/projects/${projectId}/${slug}`;
                const current = path === href || path.startsWith(`${href}/`);
                return (
                  <li key={slug}>
                    <a href={href} aria-current={current ? 'page' : undefined}>
                      {label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </nav>
        )}
        {account && (
          <span class="plan-badge" data-testid="plan">
            {PLAN_LABELS[account.plan]} plan{account.role === 'member' ? ' · member' : ''}
          </span>
        )}
        <button type="button" class="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <div class="page-head">
          <h1>{title}</h1>
          {actions && <div class="page-actions">{actions}</div>}
        </div>
        {children}
      </main>
    </>
  );
}
