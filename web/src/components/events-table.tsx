import { formatDateTime } from '../lib/format';
import type { LiveEvent } from '../lib/live-stream';
import { ScrollRegion } from './scroll-region';
import { UserLink } from './user-link';

/**
 * Events one a row, in the order given, in a region that scrolls sideways on a narrow screen: the
 * live stream's events, or the metrics feed's, which have the same fields. With `projectId`, each
 * user links to their page.
 */
export function EventsTable({
  events,
  label,
  testId,
  projectId,
}: {
  events: readonly LiveEvent[];
  label: string;
  testId?: string;
  projectId?: string;
}) {
  return (
    <ScrollRegion label={label}>
      <table class="data-table feed-table" data-testid={testId}>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">User</th>
            <th scope="col">Properties</th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td>{formatDateTime(event.created_at)}</td>
              <td>{event.event_name}</td>
              <td class="break">{projectId ? <UserLink projectId={projectId} userId={event.user_id} /> : event.user_id}</td>
              <td>
                <code class="properties">{event.properties ? JSON.stringify(event.properties) : ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </ScrollRegion>
  );
}
