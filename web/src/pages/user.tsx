import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso';
import { api, unwrap } from '../api/client';
import { DateInput } from '../components/date-input';
import { Page } from '../components/layout';
import { Empty, FailureNotice, Loading } from '../components/states';
import { type TimelineSession, userTimeline } from '../lib/contract-api';
import { formatClock, formatCount, formatDate, formatDateTime, formatDuration, formatMoney, isoDay } from '../lib/format';
import { useResource } from '../lib/use-resource';

const PRO_TIMELINE = "A user's timeline reads the raw events: it is part of the Pro and Team plans.";

/** The page's state is its URL: the window and the timeline's cursor. */
function readQuery(query: Record<string, string>) {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  const to = query.to && day.test(query.to) ? query.to : isoDay(0);
  const from = query.from && day.test(query.from) ? query.from : isoDay(29);
  return { from, to, cursor: query.cursor || undefined };
}

/**
 * One user of the app: what the SDK registered (email, name, MRR) and their timeline, the
 * sessions newest first, each with its events in time order (GET /projects/:id/users/:userId/timeline).
 * Reached from the SDK users table, a feedback item's submitter and voters, and every event's user.
 */
export function UserPage() {
  const { params } = useRoute();
  const { query, path, route } = useLocation();
  const projectId = params.id ?? '';
  const userId = decodeURIComponent(params.userId ?? '');
  const q = readQuery(query);
  // The owners' list searched by this id, then the exact match: the one owner route with the
  // private fields (email, name, MRR).
  const registered = useResource(
    () =>
      unwrap(api.GET('/projects/{id}/users', { params: { path: { id: projectId }, query: { q: userId.slice(0, 200), limit: 100 } } })).then(
        (page) => page.users.find((user) => user.user_id === userId) ?? null,
      ),
    [projectId, userId],
  );
  const timeline = useResource(
    () => userTimeline(projectId, userId, { from: q.from, to: q.to, cursor: q.cursor }),
    [projectId, userId, q.from, q.to, q.cursor],
  );
  const go = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(query);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    route(`${path}?${next.toString()}`);
  };
  const pageHref = (cursor: string | undefined) => {
    const next = new URLSearchParams(query);
    if (cursor) next.set('cursor', cursor);
    else next.delete('cursor');
    return `${path}?${next.toString()}`;
  };

  return (
    <Page title={`User ${userId}`} projectId={projectId}>
      <p>
        <a href={`/projects/${projectId}/users`}>← SDK users</a>
      </p>
      <section class="card" aria-labelledby="user-heading">
        <h2 id="user-heading">Registration</h2>
        {registered.state === 'failed' && <FailureNotice failure={registered.failure} onRetry={registered.reload} />}
        {registered.state === 'loading' && registered.data === undefined && <Loading what="the user" />}
        {registered.data === null && (
          <p class="muted" data-testid="user-unregistered">
            The app never registered this user through the SDK (POST /users/register): only their events are known.
          </p>
        )}
        {registered.data && (
          <dl class="user-facts" data-testid="user-facts">
            <dt>Email</dt>
            <dd>{registered.data.email ?? '—'}</dd>
            <dt>Name</dt>
            <dd>{registered.data.name ?? '—'}</dd>
            <dt>MRR</dt>
            <dd>{formatMoney(registered.data.mrr)}</dd>
            <dt>First registered</dt>
            <dd>{formatDateTime(registered.data.first_seen_at)}</dd>
            <dt>Last registered</dt>
            <dd>{formatDateTime(registered.data.last_seen_at)}</dd>
          </dl>
        )}
      </section>
      <RangeForm key={`${q.from}|${q.to}`} from={q.from} to={q.to} onApply={(from, to) => go({ from, to, cursor: undefined })} />
      <section class="card" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        {timeline.data?.retention_clamped && (
          <p class="notice notice-plan" role="note" data-testid="clamp-notice">
            Your plan's window narrows this to {formatDate(timeline.data.date_from)} to {formatDate(timeline.data.date_to)}.
          </p>
        )}
        {timeline.state === 'failed' && <FailureNotice failure={timeline.failure} onRetry={timeline.reload} planHint={PRO_TIMELINE} />}
        {timeline.state === 'loading' && !timeline.data && <Loading what="the timeline" />}
        {timeline.data && timeline.data.sessions.length === 0 && (
          <Empty>{q.cursor ? 'No older sessions in this range.' : 'No events of this user in this range.'}</Empty>
        )}
        {timeline.data && timeline.data.sessions.length > 0 && (
          <ol class="timeline" aria-label="Sessions, newest first" data-testid="timeline">
            {timeline.data.sessions.map((session) => (
              <SessionItem key={session.started_at} session={session} />
            ))}
          </ol>
        )}
        {timeline.data && (
          <nav aria-label="Timeline pages" class="link-row">
            {q.cursor && <a href={pageHref(undefined)}>Newest sessions</a>}
            {timeline.data.next_cursor && <a href={pageHref(timeline.data.next_cursor)}>Older sessions</a>}
          </nav>
        )}
      </section>
    </Page>
  );
}

function SessionItem({ session }: { session: TimelineSession }) {
  const [open, setOpen] = useState(true);
  const headingId = `session-${session.started_at}`;
  return (
    <li class="timeline-session">
      <h3 id={headingId}>
        {formatDateTime(session.started_at)} · {formatDuration(session.duration_seconds)} · {formatCount(session.event_count)}{' '}
        {session.event_count === 1 ? 'event' : 'events'}
      </h3>
      <button type="button" class="link-button" aria-expanded={open} aria-describedby={headingId} onClick={() => setOpen(!open)}>
        {open ? 'Hide events' : 'Show events'}
      </button>
      {open && (
        <ol class="timeline-events">
          {session.events.map((event) => (
            <li key={event.id}>
              <time dateTime={event.created_at}>{formatClock(event.created_at)}</time> <strong>{event.event_name}</strong>{' '}
              {event.properties && Object.keys(event.properties).length > 0 && (
                <code class="properties">{JSON.stringify(event.properties)}</code>
              )}
            </li>
          ))}
        </ol>
      )}
      {session.events_truncated && (
        <p class="muted">
          The first {formatCount(session.events.length)} of its {formatCount(session.event_count)} events are listed.
        </p>
      )}
    </li>
  );
}

function RangeForm({ from, to, onApply }: { from: string; to: string; onApply: (from: string, to: string) => void }) {
  const [draft, setDraft] = useState({ from, to });
  return (
    <form
      class="card filters"
      aria-label="Date range"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(draft.from, draft.to);
      }}
    >
      <div class="field">
        <label for="user-from">From</label>
        <DateInput id="user-from" required value={draft.from} onChange={(value) => setDraft((d) => ({ ...d, from: value }))} />
      </div>
      <div class="field">
        <label for="user-to">To</label>
        <DateInput id="user-to" required value={draft.to} onChange={(value) => setDraft((d) => ({ ...d, to: value }))} />
      </div>
      <button type="submit" class="primary">
        Apply
      </button>
    </form>
  );
}
