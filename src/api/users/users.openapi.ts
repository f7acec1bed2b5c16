import { API_KEY, body, defaultError, error, json, withFieldDocs, type Route } from '../openapi/building-blocks.js';
import { RegisterUserBody } from '../feedback/feedback.schema.js';
import { SdkUserResponse } from './users.responses.js';

const requestBodies = () => ({
  registerSdkUser: body(
    withFieldDocs(RegisterUserBody, { mrr: 'Monthly recurring revenue. Omitted: the stored figure is kept; null: it is cleared.' }),
    'RegisterSdkUserRequest',
  ),
});

/** SDK users (SPEC 4.8). */
export function registerUserPaths(route: Route) {
  const requests = requestBodies();

  route({
    method: 'post',
    path: '/users/register',
    operationId: 'registerSdkUser',
    tags: ['SDK users'],
    summary: 'Register or update an SDK user',
    description:
      'Creates the user, or updates `last_seen_at` and `mrr` of a known one. An omitted `mrr` keeps the stored figure; `"mrr": null` clears it. Allowed on archived projects.',
    security: API_KEY,
    request: { body: requests.registerSdkUser },
    responses: {
      200: json('The user.', SdkUserResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
  });
}
