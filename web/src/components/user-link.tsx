/** Where a user's page (their timeline) lives: linked from every place that names an app user. */
export function userHref(projectId: string, userId: string): string {
  return `/projects/${projectId}/users/${encodeURIComponent(userId)}`;
}

/** A user id as a link to that user's page. */
export function UserLink({ projectId, userId, children }: { projectId: string; userId: string; children?: preact.ComponentChildren }) {
  return (
    <a href={userHref(projectId, userId)} class="break">
      {children ?? userId}
    </a>
  );
}
