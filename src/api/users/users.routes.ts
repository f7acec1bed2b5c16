import { z } from 'zod';
import { findSdkUser, listSdkUsers, registerSdkUser } from '../../oltp/sdk-users.repo.js';
import { keyProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.js';

import { actingUser, viewerOf } from '../shared/acting-user.js';
import { body, defaultError, describe, error, json, ProjectPath, withFieldDocs } from '../shared/building-blocks.js';
import type { RequestContext } from '../state.js';
import { presentPublicSdkUser, presentRegisteredUser, presentSdkUser, presentSdkUserPage } from './users.presenter.js';
import { PublicSdkUserResponse, SdkUserPageResponse, SdkUserResponse } from './users.responses.js';
import { ListSdkUsersQuery, RegisterUserBody } from './users.schema.js';

const UserPath = z.object({
  userId: describe(z.string().min(1, 'user not found'), 'The client app’s user identifier (`user_id`), URL-encoded.'),
});

/**
 * Whether a request may read `userId`'s private fields (email, name, MRR): only with that user's
 * own signed token (docs/clients.md, "Reading one SDK user"). The API key is public in practice
 * (it ships inside apps), so the key alone gets the public part; where the project requires signed
 * identity, or with the publishable key, a token is required at all.
 */
function readsPrivateFields(ctx: RequestContext, userId: string): boolean {
  const identity = ctx.state.identity;
  if (identity) {
    if (identity.userId !== userId) throw forbidden('X-User-Token: a token reads its own user only');
    return true;
  }
  if (keyProject(ctx).require_signed_identity || ctx.state.publishableKey) {
    throw unauthorized('X-User-Token: reading an SDK user here needs that user’s token signed by the app’s server');
  }
  return false;
}

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
        userId:
          'The client app’s user id. Also read as `external_id` (the origin project’s Kotlin SDK). Omitted or null: the user of `X-User-Token`, else of the `X-User-Id` header (the Kotlin SDK’s `users.register(email, name)` sends no id); with neither, a 400.',
        mrr: "Monthly recurring revenue. The stored figure becomes what is sent: omitted or null clears it (as the origin service did; an SDK clears a user's payment this way).",
        email:
          'The user’s email. Not in SPEC 4.8 (the origin project’s Kotlin SDK sends it). Omitted: the stored one stays; null clears it. Private: read back only by the owner and the user’s own token.',
        name: 'The user’s display name, as `email`. Not in SPEC 4.8.',
      }),
      'RegisterSdkUserRequest',
    ),
    responses: {
      200: json('The user.', SdkUserResponse),
      400: error(
        'Validation failed; the reason names the field. `userId: is required` when neither the body nor the request headers name the user.',
      ),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended, or the key is the publishable one.'),
      default: defaultError,
    },
    handler: async (ctx, { sql, rateLimits }, { body: input }) => {
      // A body that names no user registers the request's own one, as every other call of the
      // Kotlin SDK names its user (X-User-Id).
      const userId = input.userId ?? viewerOf(ctx);
      if (userId === undefined) throw badRequest('userId: is required');
      // With a token, only its user registers; a project that requires signed identity needs one.
      await actingUser(ctx, { sql, rateLimits }, userId);
      const row = await registerSdkUser(sql, keyProject(ctx).id, { ...input, userId });
      ctx.body = presentRegisteredUser(row, input);
    },
  }),
  /** getCurrentUser of the origin's Kotlin SDK (docs/clients.md): not in SPEC part 4. */
  defineRoute({
    method: 'get',
    path: '/users/:userId',
    auth: 'clientKey',
    cors: true,
    operationId: 'getSdkUser',
    tags: ['SDK users'],
    summary: 'Read one SDK user',
    description:
      'Not in SPEC part 4; the origin project’s Kotlin SDK reads the current user here. With the user’s own `X-User-Token` (signed by the app’s server): the whole record, email, name and MRR included. With the secret API key alone: the public part (ids and when the user was seen), never email, name or MRR, since the key ships inside apps. With the publishable key, or where the project requires signed identity, a token is required. Owners read every user with `GET /projects/{id}/users`.',
    params: UserPath,
    responses: {
      200: json('The user: the whole record to their own token, else the public part.', z.union([SdkUserResponse, PublicSdkUserResponse])),
      401: error('Missing or invalid API key; or no `X-User-Token` where one is required.'),
      403: error('The project is suspended, or the token is another user’s.'),
      404: error('The app never registered this user.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { params: { userId } }) => {
      const full = readsPrivateFields(ctx, userId);
      const row = await findSdkUser(sql, keyProject(ctx).id, userId);
      if (!row) throw notFound('user not found');
      ctx.body = full ? presentSdkUser(row) : presentPublicSdkUser(row);
    },
  }),
  /** The owner reads a project's SDK users one by one (admin token): MRR, first and last seen, sortable. */
  defineRoute({
    method: 'get',
    path: '/projects/:id/users',
    auth: 'projectAdmin',
    operationId: 'listProjectSdkUsers',
    tags: ['Projects'],
    summary: 'List a project’s SDK users',
    description:
      'One sorted page of the users the client app registered (those whose id, email or name contains `q`, when given), with their MRR, email, name, first and last registration, and how many match in all. `last_seen_at` is the last POST /users/register, not the last event: a user’s events are on `GET /projects/{id}/users/{userId}/timeline`.',
    params: ProjectPath,
    query: ListSdkUsersQuery,
    responses: {
      200: json('The page.', SdkUserPageResponse),
      400: error('An invalid query parameter (the reason names it), or one given twice.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, query }) => {
      ctx.body = presentSdkUserPage(await listSdkUsers(sql, project.id, query));
    },
  }),
];
