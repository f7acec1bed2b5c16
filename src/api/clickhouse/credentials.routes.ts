import { z } from 'zod';
import { hashSecret, newSecret } from '../../core/secrets.js';
import {
  createClickhouseCredential,
  deleteClickhouseCredential,
  listClickhouseCredentials,
} from '../../oltp/clickhouse-credentials.repo.js';
import { defineRoute } from '../define-route.js';
import { notFound } from '../errors.js';
import { defaultError, describe, error, json, ProjectPath, projectId } from '../shared/building-blocks.js';
import { presentClickhouseCredential } from './credentials.presenter.js';
import { ClickhouseCredentialResponse, NewClickhouseCredentialResponse } from './credentials.responses.js';

/** Prefix of a ClickHouse-interface password: recognisable when leaked, like the other secrets. */
export const CLICKHOUSE_PASSWORD_PREFIX = 'fbch_';

const CredentialPath = z.object({
  id: projectId,
  credentialId: describe(
    z.uuid({ error: 'credential not found' }),
    'Credential id. 404 when the project has no such credential (a malformed id too).',
  ),
});

const TAGS = ['ClickHouse interface'];

/**
 * Credentials of the read-only ClickHouse HTTP interface (docs/clickhouse-interface.md): the
 * owning account's admin token, or a team member's while the plan is Team (adminAuth), creates,
 * lists and revokes them. A credential reads the project's analytics through the interface and
 * nothing else.
 */
export const clickhouseCredentialRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/clickhouse-credentials',
    auth: 'projectAdmin',
    operationId: 'createClickhouseCredential',
    tags: TAGS,
    summary: 'Create a credential of the read-only ClickHouse HTTP interface',
    description:
      'No body. The answer holds the password, shown only here (it is stored as a hash). Connect with the username (the project id) and this password to `/clickhouse` of this host, or to the port CLICKHOUSE_INTERFACE_PORT (docs/clickhouse-interface.md). The credential only reads the project’s events, facts and rollups, as `POST /projects/{id}/sql` does.',
    params: ProjectPath,
    responses: {
      201: json('The credential, with its password (shown only here).', NewClickhouseCredentialResponse),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project }) => {
      const password = newSecret(CLICKHOUSE_PASSWORD_PREFIX);
      const row = await createClickhouseCredential(sql, { projectId: project.id, passwordHash: hashSecret(password) });
      ctx.status = 201;
      ctx.body = presentClickhouseCredential(row, password);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/clickhouse-credentials',
    auth: 'projectAdmin',
    operationId: 'listClickhouseCredentials',
    tags: TAGS,
    summary: 'List the credentials of the ClickHouse interface',
    description: 'Oldest first, without passwords, each with when it was last used.',
    params: ProjectPath,
    responses: {
      200: json('The credentials.', z.array(ClickhouseCredentialResponse)),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project }) => {
      ctx.body = (await listClickhouseCredentials(sql, project.id)).map((row) => presentClickhouseCredential(row));
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/clickhouse-credentials/:credentialId',
    auth: 'projectAdmin',
    operationId: 'revokeClickhouseCredential',
    tags: TAGS,
    summary: 'Revoke a credential of the ClickHouse interface',
    description: 'The credential is refused from the next request on (ClickHouse error 516); a query it is running goes on to its end.',
    params: CredentialPath,
    responses: {
      200: json('The revoked credential.', ClickhouseCredentialResponse),
      404: error('No such project, or no such credential in it.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params }) => {
      const row = await deleteClickhouseCredential(sql, project.id, params.credentialId);
      if (!row) throw notFound('credential not found');
      ctx.body = presentClickhouseCredential(row);
    },
  }),
];
