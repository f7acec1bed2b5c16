import { apiTime } from './time.js';

/**
 * An analytics event as it travels from the API through the queue to ClickHouse. Times are ISO
 * strings so the value survives JSON (BullMQ job data) unchanged.
 */
export type IngestEvent = {
  project_id: string;
  event_id: string;
  event_name: string;
  user_id: string;
  /** The properties object as sent, or null. */
  properties: Record<string, unknown> | null;
  created_at: string;
  received_at: string;
  /** true when the id came from the client's eventId: such events are checked for duplicates. */
  id_from_client: boolean;
};

/** SPEC 2.7 Tracked event, as the API returns it. */
export type TrackedEventResponse = {
  id: string;
  event_name: string;
  user_id: string;
  properties: Record<string, unknown> | null;
  created_at: string;
};

export function toTrackedEvent(event: IngestEvent): TrackedEventResponse {
  return {
    id: event.event_id,
    event_name: event.event_name,
    user_id: event.user_id,
    properties: event.properties,
    // Whole seconds in the answer; the stored event keeps its milliseconds for ordering.
    created_at: apiTime(event.created_at),
  };
}

/** Key under which a client-supplied event id is unique: per project. */
export const eventKey = (projectId: string, eventId: string) => `${projectId}:${eventId}`;
