import { listSdkUsers, registerSdkUser } from '../../oltp/sdk-users.repo.js';
import { keyProject, ownedProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import { RegisterUserBody } from '../feedback/feedback.schema.js';
import { actingUser } from '../identity/acting-user.js';
import { body, defaultError, describe, error, json, ProjectPath, withFieldDocs } from '../openapi/building-blocks.js';
import { parseBody, parseQuery } from '../validation.js';
import { presentSdkUser, presentSdkUserPage } from './users.presenter.js';
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

/** SDK users (SPEC 4.8): the client app registers them; the owner reads them. */
export const userRoutes = [
  /** Register or update an SDK user. Allowed on archived projects: it is not feedback. */
  defineRoute({
    method: 'post',
    path: '/users/register',
    auth: 'apiKey',
    cors: true,
    operationId: 'registerSdkUser',
    tags: ['SDK users'],
    summary: 'Register or update an SDK user',
    description:
      'Creates the user, or updates `last_seen_at` and `mrr` of a known one. The stored `mrr` becomes the one sent: a call without `mrr` (or with `"mrr": null`) clears it, as the origin service did (its SDKs clear a payment that way), so send the figure on every call. Allowed on archived projects. With the publishable key: 403 (MRR comes only from the secret key or a signed token).',
    body: body(
      withFieldDocs(RegisterUserBody, {
        mrr: "Monthly recurring revenue. The stored figure becomes what is sent: omitted or null clears it (as the origin service did; an SDK clears a user's payment this way).",
      }),
      'RegisterSdkUserRequest',
    ),
    responses: {
      200: json('The user.', SdkUserResponse),
      400: error('Validation failed; the reason names the field.'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended, or the key is the publishable one.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, rateLimits }) => {
      const input = parseBody(RegisterUserBody, ctx.request.body);
      // With a token, only its user registers; a project that requires signed identity needs one.
      await actingUser(ctx, { sql, rateLimits }, input.userId);
      const row = await registerSdkUser(sql, keyProject(ctx).id, input);
      ctx.body = presentSdkUser(row);
    },
  }),
  /** The owner reads a project's SDK users one by one (admin token): MRR, first and last seen, sortable. */
  defineRoute({
    method: 'get',
    path: '/projects/:id/users',
    auth: 'adminToken',
    operationId: 'listProjectSdkUsers',
    tags: ['Projects'],
    summary: 'List a project’s SDK users',
    description:
      'One sorted page of the users the client app registered, with their MRR, first and last seen, and how many there are in all.',
    params: ProjectPath,
    query: SdkUserListQuery,
    responses: {
      200: json('The page.', SdkUserPageResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      401: error('Missing or invalid admin token.'),
      403: error('The project belongs to another account, or is suspended.'),
      404: error('No such project.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }) => {
      const project = await ownedProject(sql, ctx, ctx.params.id ?? '');
      const query = parseQuery(ListSdkUsersQuery, ctx.query);
      ctx.body = presentSdkUserPage(await listSdkUsers(sql, project.id, query));
    },
  }),
];
