import { loadFeedbackItem } from '../lib/feedback';
import { useResource } from '../lib/use-resource';

/** A link to another item of the project, named by its title once loaded. */
export function FeedbackLink({ projectId, id }: { projectId: string; id: string }) {
  const other = useResource(() => loadFeedbackItem(projectId, id), [projectId, id]);
  return <a href={`/projects/${projectId}/feedback/${id}`}>{other.data?.title ?? id}</a>;
}
