import createClient, { type Middleware } from 'openapi-fetch';
import { session } from '../lib/session';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];

/** Same origin as the pages: the service that serves the dashboard answers its API. */
export const API_BASE = '/api/v1';

/**
 * The signed-in token on every call that brings no credentials of its own (the sign-in check
 * brings the candidate token; comment calls bring the project's API key).
 */
const authentication: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token && !request.headers.has('authorization') && !request.headers.has('x-api-key')) {
      request.headers.set('Authorization', `Bearer ${token}`);
    }
    return request;
  },
  onResponse({ request, response }) {
    // The session's token is no longer accepted (revoked, member removed): forget it, and the
    // app shows the sign-in page again.
    const token = session.token();
    if (response.status === 401 && token && request.headers.get('authorization') === `Bearer ${token}`) session.expire();
    return response;
  },
};

/** The typed client: its paths, parameters and bodies come from the OpenAPI document. */
export const api = createClient<paths>({
  baseUrl: API_BASE,
  // The document's list parameters (metrics `measures`) are comma-separated (style form, explode
  // false); the metrics API refuses a repeated parameter.
  querySerializer: { array: { style: 'form', explode: false } },
});
api.use(authentication);

export { unwrap } from './failure';
