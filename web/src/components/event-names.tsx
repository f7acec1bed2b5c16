import { api, type Schemas, unwrap } from '../api/client';
import { formatCount } from '../lib/format';
import { type Resource, useResource } from '../lib/use-resource';

export type EventNameRow = Schemas['EventNamesResult']['event_names'][number];

/** The project's event names seen in the window (GET /event-names), most tracked first, for pickers. */
export function useEventNames(projectId: string, from?: string, to?: string): Resource<Schemas['EventNamesResult']> {
  return useResource(
    () =>
      unwrap(
        api.GET('/projects/{id}/event-names', {
          params: { path: { id: projectId }, query: { ...(from ? { date_from: from } : {}), ...(to ? { date_to: to } : {}), limit: 200 } },
        }),
      ),
    [projectId, from, to],
  );
}

/**
 * The completion list of the event-name inputs that name it (`list={id}`): the browser's own
 * combobox, so typing filters it and the keyboard picks from it.
 */
export function EventNameOptions({ id, names }: { id: string; names: EventNameRow[] | undefined }) {
  return (
    <datalist id={id}>
      {(names ?? []).map((row) => (
        <option key={row.event_name} value={row.event_name}>
          {formatCount(row.event_count)} events
        </option>
      ))}
    </datalist>
  );
}
