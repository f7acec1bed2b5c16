import { z } from 'zod';
import { DEFAULT_API_URLS, type TrackerConnection, type TrackerKind } from '../../core/trackers.js';
import type { ProjectWithPlan } from '../../oltp/projects.repo.js';
import { type TrackerForCall, trackerForCall } from '../../oltp/trackers.repo.js';
import { defineRoute, type RouteDeps } from '../define-route.js';
import { badRequest } from '../errors.js';
import { body, defaultError, error, json, ProjectPath, withFieldDocs } from '../shared/building-blocks.js';
import { assertCallable, connectionOf, trackerCall, trackerCallResponses } from '../shared/tracker-calls.js';
import { bodySchema } from '../validation.js';
import { DiscoveryBody, linearId } from './tracker-integrations.schema.js';

/*
 * What the setup form offers in its pickers (docs/integrations.md): the repositories a GitHub
 * token reaches, a Linear key's teams and a team's workflow states. POST, because the token of a
 * form not yet saved travels in the body (never in a URL, which logs and proxies keep); a saved
 * integration's token is used by naming the integration instead.
 */

const INTEGRATIONS_PLAN = { plan: { feature: 'integrations', reason: 'integrations require the Pro or Team plan' } } as const;

const DiscoveryRequest = bodySchema(DiscoveryBody);
const StatesRequest = bodySchema({ ...DiscoveryBody, teamId: linearId.optional() });

const discoveryDocs = {
  token: 'A token to try (the setup form, before saving). Either this or `integrationId`.',
  apiUrl: 'With `token`: the tracker’s API, by default GitHub’s or Linear’s. The SSRF guard applies (ALLOW_PRIVATE_WEBHOOKS).',
  integrationId: 'A saved integration of this project (of this tracker) whose token and api_url to use.',
};

/** The connection a discovery request names: a token with its api_url, or a saved integration's. */
async function connectionFor(
  deps: RouteDeps,
  project: ProjectWithPlan,
  kind: TrackerKind,
  input: { token?: string | undefined; apiUrl?: string | undefined; integrationId?: string | undefined },
): Promise<{ connection: TrackerConnection; saved: TrackerForCall | null }> {
  if ((input.token === undefined) === (input.integrationId === undefined)) throw badRequest('token or integrationId: give exactly one');
  if (input.integrationId !== undefined) {
    if (input.apiUrl !== undefined) throw badRequest('apiUrl: only with token (a saved integration has its own)');
    const saved = await trackerForCall(deps.sql, project.id, input.integrationId);
    if (!saved || saved.kind !== kind) throw badRequest(`integrationId: not a ${kind} integration of this project`);
    assertCallable(saved);
    return { connection: connectionOf(deps, saved), saved };
  }
  const apiUrl = input.apiUrl ?? DEFAULT_API_URLS[kind];
  const refused = deps.trackers.refusedApiUrl(apiUrl);
  if (refused) throw badRequest(`apiUrl: ${refused}`);
  return { connection: { apiUrl, token: input.token as string }, saved: null };
}

const GithubRepository = z
  .object({
    full_name: z.string().meta({ description: '`owner/name`, the integration’s `repository`.' }),
    private: z.boolean(),
    html_url: z.string(),
  })
  .meta({ id: 'GithubRepository' });
const LinearTeam = z
  .object({ id: z.string(), key: z.string().meta({ description: 'The prefix of its issues (`ENG` of ENG-42).' }), name: z.string() })
  .meta({ id: 'LinearTeam' });
const LinearWorkflowState = z
  .object({
    id: z.string(),
    name: z.string(),
    type: z.string().meta({ description: '`triage`, `backlog`, `unstarted`, `started`, `completed` or `canceled`.' }),
    position: z.number(),
  })
  .meta({ id: 'LinearWorkflowState' });

const badDiscovery = error(
  'Validation failed; neither or both of `token` and `integrationId`; the tracker refused the token (`token: …`), or the team is unknown; an `apiUrl` the SSRF guard refuses.',
);
const savedNeedsAttention = error('The named integration is disabled, or needs attention: the tracker refused its token (now or before).');

export const trackerDiscoveryRoutes = [
  defineRoute({
    method: 'post',
    path: '/projects/:id/trackers/github/repositories',
    auth: 'projectAdmin',
    projectRules: INTEGRATIONS_PLAN,
    operationId: 'listGithubRepositories',
    tags: ['Integrations'],
    summary: 'The GitHub repositories a token reaches (the setup’s picker)',
    description:
      'Pro and Team plans. Calls GitHub’s `GET /user/repos` with the token (at most 1,000 repositories, most recently updated first). A fine-grained token lists the repositories it was given.',
    params: ProjectPath,
    body: body(withFieldDocs(DiscoveryRequest, discoveryDocs), 'GithubRepositoriesRequest'),
    responses: {
      200: json('The repositories.', z.array(GithubRepository)),
      400: badDiscovery,
      402: error('The account’s plan is Free (integrations need Pro or Team).'),
      409: savedNeedsAttention,
      ...trackerCallResponses,
      default: defaultError,
    },
    handler: async (ctx, deps, { project, body }) => {
      const { connection, saved } = await connectionFor(deps, project, 'github', body);
      ctx.body = await trackerCall({ kind: 'github', sql: deps.sql, saved }, () => deps.trackers.github.listRepositories(connection));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/trackers/linear/teams',
    auth: 'projectAdmin',
    projectRules: INTEGRATIONS_PLAN,
    operationId: 'listLinearTeams',
    tags: ['Integrations'],
    summary: 'The Linear teams an API key reaches (the setup’s picker)',
    description: 'Pro and Team plans. Asks Linear’s GraphQL API for `teams`.',
    params: ProjectPath,
    body: body(withFieldDocs(DiscoveryRequest, discoveryDocs), 'LinearTeamsRequest'),
    responses: {
      200: json('The teams.', z.array(LinearTeam)),
      400: badDiscovery,
      402: error('The account’s plan is Free (integrations need Pro or Team).'),
      409: savedNeedsAttention,
      ...trackerCallResponses,
      default: defaultError,
    },
    handler: async (ctx, deps, { project, body }) => {
      const { connection, saved } = await connectionFor(deps, project, 'linear', body);
      ctx.body = await trackerCall({ kind: 'linear', sql: deps.sql, saved }, () => deps.trackers.linear.listTeams(connection));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/trackers/linear/workflow-states',
    auth: 'projectAdmin',
    projectRules: INTEGRATIONS_PLAN,
    operationId: 'listLinearWorkflowStates',
    tags: ['Integrations'],
    summary: 'A Linear team’s workflow states (the status map editor)',
    description:
      'Pro and Team plans. Asks Linear for the team’s `workflowStates`, in their order on the board. The team is `teamId`, or the named integration’s team.',
    params: ProjectPath,
    body: body(
      withFieldDocs(StatesRequest, {
        ...discoveryDocs,
        teamId: 'The team; with `integrationId` it may be left out (the integration’s team).',
      }),
      'LinearWorkflowStatesRequest',
    ),
    responses: {
      200: json('The team’s states.', z.array(LinearWorkflowState)),
      400: badDiscovery,
      402: error('The account’s plan is Free (integrations need Pro or Team).'),
      409: savedNeedsAttention,
      ...trackerCallResponses,
      default: defaultError,
    },
    handler: async (ctx, deps, { project, body }) => {
      const { connection, saved } = await connectionFor(deps, project, 'linear', body);
      const teamId = body.teamId ?? saved?.settings.target;
      if (teamId === undefined) throw badRequest('teamId: is required with token');
      ctx.body = await trackerCall({ kind: 'linear', sql: deps.sql, saved, notFound: `teamId: no such team, ${teamId}` }, () =>
        deps.trackers.linear.listWorkflowStates(connection, teamId),
      );
    },
  }),
];
