import { api, unwrap } from '../api/client';
import { EventsTable } from '../components/events-table';
import { Empty, FailureNotice, Loading } from '../components/states';
import { useResource } from '../lib/use-resource';

/* The metrics page's event feed: the window's events, newest first, a page at a time by cursor. */

const PRO_FEED = 'The raw event feed is part of the Pro and Team plans.';
const FEED_PAGE = 25;

export function EventFeed({
  projectId,
  from,
  to,
  event,
  filtered,
  cursor,
  query,
  path,
}: {
  projectId: string;
  from: string;
  to: string;
  event: string | undefined;
  filtered: boolean;
  cursor?: string | undefined;
  query: Record<string, string>;
  path: string;
}) {
  const result = useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/metrics/events', {
          params: {
            path: { id: projectId },
            query: { date_from: from, date_to: to, limit: FEED_PAGE, ...(event ? { event } : {}), ...(cursor ? { cursor } : {}) },
          },
        }),
      ),
    [projectId, from, to, event, cursor],
  );
  const pageHref = (nextCursor: string | undefined) => {
    const next = new URLSearchParams(query);
    if (nextCursor) next.set('cursor', nextCursor);
    else next.delete('cursor');
    return `${path}?${next.toString()}#feed-heading`;
  };
  return (
    <section aria-labelledby="feed-heading" class="card">
      <h2 id="feed-heading">Event feed</h2>
      {filtered && (
        <p class="muted">The feed lists the events of the range{event ? ` named ${event}` : ''}; the filters narrow the charts.</p>
      )}
      {result.state === 'failed' && <FailureNotice failure={result.failure} onRetry={result.reload} planHint={PRO_FEED} />}
      {result.state === 'loading' && !result.data && <Loading what="events" />}
      {result.data && result.data.events.length === 0 && <Empty>{cursor ? 'No older events.' : 'No events in this range yet.'}</Empty>}
      {result.data && result.data.events.length > 0 && <EventsTable events={result.data.events} label="Events" projectId={projectId} />}
      {result.data && (
        <nav aria-label="Event feed pages" class="link-row">
          {cursor && <a href={pageHref(undefined)}>Newest events</a>}
          {result.data.next_cursor && <a href={pageHref(result.data.next_cursor)}>Older events</a>}
        </nav>
      )}
    </section>
  );
}
