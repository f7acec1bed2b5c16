import createClient from 'openapi-fetch';
import { ApiFailure } from '../api/failure';

export { unwrap } from '../api/failure';

import type { components, paths } from '../api/schema';
import { currentToken } from './visitor';

export type Feedback = components['schemas']['Feedback'];
export type Comment = components['schemas']['Comment'];
export type SimilarFeedback = components['schemas']['SimilarFeedback'];
export type ChangelogEntry = components['schemas']['PublicChangelogEntry'];
export type FeedbackCategory = Feedback['category'];
export type FeedbackStatus = Feedback['status'];

/**
 * The widget's and the board's calls: the key routes of SPEC part 4 with the project's
 * publishable key, and the visitor's signed token when there is one (X-User-Token, a header:
 * never in a URL), or an anonymous visitor's id in X-User-Id. Same origin as the pages, so no CORS is involved.
 */
export function publicApi(publishableKey: string, anonymousViewer: () => string | null = () => null) {
  const client = createClient<paths>({ baseUrl: '/api/v1' });
  client.use({
    onRequest({ request }) {
      request.headers.set('X-API-Key', publishableKey);
      const token = currentToken();
      if (token) request.headers.set('X-User-Token', token);
      // An anonymous visitor's own votes are marked through X-User-Id (SPEC 2.1), as in the apps.
      const anonymous = token ? null : anonymousViewer();
      if (anonymous) request.headers.set('X-User-Id', anonymous);
      return request;
    },
  });
  return client;
}

export type PublicApi = ReturnType<typeof publicApi>;

/** What a visitor is told when a call is refused: the service's reason, or the wait on 429. */
export function refusalText(error: unknown): string {
  if (error instanceof ApiFailure) {
    if (error.status === 429) return `Too many actions for now. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
    if (error.status === 0) return 'The service could not be reached.';
    return error.reason;
  }
  return 'Something went wrong.';
}
