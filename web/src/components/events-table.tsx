import { formatDateTime } from '../lib/format';
import { ScrollRegion } from './scroll-region';

/** One stored event as both the live stream and the metrics feed send it. */
export type EventRow = {
  id: string;
  event_name: string;
  user_id: string;
  properties?: Record<string, unknown> | null;
  created_at: string;
};

/** Events one a row, newest first as given, in a region that scrolls sideways on a narrow screen. */
export function EventsTable({ events, label, testId }: { events: readonly EventRow[]; label: string; testId?: string }) {
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
              <td class="break">{event.user_id}</td>
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
