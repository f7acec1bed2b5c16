import { createParser } from 'eventsource-parser';
import { API_BASE } from '../api/client';
import { ApiFailure } from '../api/failure';
import { session } from './session';

/** A tracked event as the live route sends it (SPEC 2.7). */
export type LiveEvent = {
  id: string;
  event_name: string;
  user_id: string;
  properties?: Record<string, unknown> | null;
  created_at: string;
};

export type LiveState =
  | { kind: 'connecting' }
  | { kind: 'live'; eventScope: 'all' | 'predefined_only' }
  | { kind: 'reconnecting'; reason: string; inSeconds: number }
  | { kind: 'refused'; failure: ApiFailure };

const DEFAULT_RETRY_MS = 2000;
const MAX_RETRY_MS = 30_000;

/**
 * Follows GET /projects/:id/live. The route takes the admin token in the Authorization header
 * only, which EventSource cannot send: this reads the stream with fetch and parses its
 * Server-Sent Events. A dropped stream is opened again after the server's `retry:` (doubling
 * while it keeps failing); a refusal (401, 402, 403, 404, 429) stops and is reported. Returns stop().
 */
export function followLive(
  projectId: string,
  handlers: { onEvent: (event: LiveEvent) => void; onState: (state: LiveState) => void },
): () => void {
  let stopped = false;
  let controller: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;

  const retryLater = (reason: string) => {
    if (stopped) return;
    const wait = Math.min(retryMs * 2 ** failures, MAX_RETRY_MS);
    failures += 1;
    handlers.onState({ kind: 'reconnecting', reason, inSeconds: Math.round(wait / 1000) });
    timer = setTimeout(connect, wait);
  };

  async function connect() {
    if (stopped) return;
    controller = new AbortController();
    handlers.onState({ kind: 'connecting' });
    let response: Response;
    try {
      response = await fetch(`${API_BASE}/projects/${encodeURIComponent(projectId)}/live`, {
        headers: { Accept: 'text/event-stream', Authorization: `Bearer ${session.token() ?? ''}` },
        signal: controller.signal,
        cache: 'no-store',
      });
    } catch (error) {
      if (!stopped) retryLater(`the service could not be reached (${error instanceof Error ? error.message : String(error)})`);
      return;
    }
    if (!response.ok || !response.body) {
      const body = await response.json().catch(() => undefined);
      const failure = ApiFailure.fromResponse(response, body);
      if (response.status >= 500) retryLater(`the service failed to answer (${response.status})`);
      else {
        if (response.status === 401) session.expire();
        handlers.onState({ kind: 'refused', failure });
      }
      return;
    }
    const parser = createParser({
      onEvent(message) {
        if (message.event === 'ready') {
          failures = 0;
          const { event_scope } = JSON.parse(message.data) as { event_scope: 'all' | 'predefined_only' };
          handlers.onState({ kind: 'live', eventScope: event_scope });
        } else if (message.event === 'event') {
          handlers.onEvent(JSON.parse(message.data) as LiveEvent);
        }
      },
      onRetry(ms) {
        retryMs = ms;
      },
    });
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
      if (!stopped) retryLater('the stream ended');
    } catch (error) {
      if (!stopped) retryLater(`the stream was cut (${error instanceof Error ? error.message : String(error)})`);
    }
  }

  void connect();
  return () => {
    stopped = true;
    clearTimeout(timer);
    controller?.abort();
  };
}
