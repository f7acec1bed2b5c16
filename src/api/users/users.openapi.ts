import {
  ADMIN_TOKEN,
  API_KEY,
  body,
  defaultError,
  describe,
  error,
  json,
  ProjectPath,
  withFieldDocs,
  type Route,
} from '../openapi/building-blocks.js';
import { RegisterUserBody } from '../feedback/feedback.schema.js';
import { SdkUserPageResponse, SdkUserResponse } from './users.responses.js';
import { ListSdkUsersQuery } from './users.schema.js';

const { shape } = ListSdkUsersQuery;
const SdkUserListQuery = ListSdkUsersQuery.extend({
  sort: describe(
    shape.sort,
    '`mrr`, `first_seen` (first registration) or `last_seen` (the default: the last POST /users/register for the user; tracked events do not move it). Users without MRR come last in both orders; ties by user id.',
  ),
  order: describe(shape.order, '`asc` or `desc` (the default).'),
  limit: describe(shape.limit, 'Page size, 1 to 1000 (default 50).'),
  offset: describe(shape.offset, 'Users to skip (default 0).'),
});

const requestBodies = () => ({
  registerSdkUser: body(
    withFieldDocs(RegisterUserBody, {
      mrr: "Monthly recurring revenue. The stored figure becomes what is sent: omitted or null clears it (as the origin service did; an SDK clears a user's payment this way).",
    }),
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
      'Creates the user, or updates `last_seen_at` and `mrr` of a known one. The stored `mrr` becomes the one sent: a call without `mrr` (or with `"mrr": null`) clears it, as the origin service did (its SDKs clear a payment that way), so send the figure on every call. Allowed on archived projects.',
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

  route({
    method: 'get',
    path: '/projects/{id}/users',
    operationId: 'listProjectSdkUsers',
    tags: ['Projects'],
    summary: 'List a project’s SDK users',
    description:
      'One sorted page of the users the client app registered, with their MRR, first and last seen, and how many there are in all.',
    security: ADMIN_TOKEN,
    request: { params: ProjectPath, query: SdkUserListQuery },
    responses: {
      200: json('The page.', SdkUserPageResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
  });
}
