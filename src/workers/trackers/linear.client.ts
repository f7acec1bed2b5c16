import { LinearClient, LinearErrorType, parseLinearError } from '@linear/sdk';
import {
  type LinearApi,
  type LinearIssue,
  type LinearTeam,
  type LinearWorkflowState,
  type TrackerConnection,
  TrackerError,
} from '../../core/trackers.js';
import type { GuardedHttp } from './guarded-fetch.js';
import { blockedCause, retryAfterMs } from './tracker-errors.js';

/*
 * Linear's GraphQL API through @linear/sdk's client. The documents are ours, asking for the few
 * fields the service reads: the SDK's generated queries fetch whole models (an issue is some fifty
 * fields and relations, and its state one more query), which costs calls and Linear's complexity
 * budget. They go through the SDK's own GraphQL client, so authentication, headers and error
 * parsing (parseLinearError) are the SDK's.
 */

const ISSUE_FIELDS = 'id identifier url title description state { id name type } team { id }';

const TEAMS = `query Teams($after: String) {
  teams(first: 100, after: $after) { nodes { id key name } pageInfo { hasNextPage endCursor } }
}`;
const WORKFLOW_STATES = `query WorkflowStates($teamId: ID!) {
  workflowStates(first: 100, filter: { team: { id: { eq: $teamId } } }) { nodes { id name type position } }
}`;
const ISSUE = `query Issue($id: String!) { issue(id: $id) { ${ISSUE_FIELDS} } }`;
const ISSUE_CREATE = `mutation IssueCreate($input: IssueCreateInput!) {
  issueCreate(input: $input) { success issue { ${ISSUE_FIELDS} } }
}`;
const ISSUE_UPDATE = `mutation IssueUpdate($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success issue { ${ISSUE_FIELDS} } }
}`;

/** At most this many teams are offered (10 pages). */
const MAX_PAGES = 10;

type RawIssue = {
  id: string;
  identifier: string;
  url: string;
  title: string;
  description?: string | null;
  state: { id: string; name: string; type: string };
  team: { id: string };
};

const toIssue = (issue: RawIssue): LinearIssue => ({
  id: issue.id,
  identifier: issue.identifier,
  url: issue.url,
  title: issue.title,
  description: issue.description ?? '',
  state: { id: issue.state.id, name: issue.state.name, type: issue.state.type },
  team_id: issue.team.id,
});

export function linearApi(http: GuardedHttp): LinearApi {
  const request = async <T>(
    connection: TrackerConnection,
    what: string,
    document: string,
    variables: Record<string, unknown>,
  ): Promise<T> => {
    try {
      http.checkUrl(connection.apiUrl);
      // Personal API keys go as they are in Authorization (apiKey); the dispatcher carries the
      // guard and the signal the time limit into the global fetch the SDK calls.
      const client = new LinearClient({
        apiKey: connection.token,
        apiUrl: connection.apiUrl,
        dispatcher: http.dispatcher,
        signal: http.signal(),
      } as unknown as ConstructorParameters<typeof LinearClient>[0]);
      return await client.client.request<T, Record<string, unknown>>(document, variables);
    } catch (error) {
      throw linearFailure(what, error);
    }
  };
  return {
    async listTeams(connection) {
      const teams: LinearTeam[] = [];
      let after: string | null = null;
      for (let page = 0; page < MAX_PAGES; page++) {
        const data: { teams: { nodes: LinearTeam[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await request(
          connection,
          'list teams',
          TEAMS,
          { after },
        );
        teams.push(...data.teams.nodes.map((team) => ({ id: team.id, key: team.key, name: team.name })));
        if (!data.teams.pageInfo.hasNextPage || !data.teams.pageInfo.endCursor) break;
        after = data.teams.pageInfo.endCursor;
      }
      return teams;
    },
    async listWorkflowStates(connection, teamId) {
      const data = await request<{ workflowStates: { nodes: LinearWorkflowState[] } }>(
        connection,
        'list workflow states',
        WORKFLOW_STATES,
        {
          teamId,
        },
      );
      return data.workflowStates.nodes
        .map((state) => ({ id: state.id, name: state.name, type: state.type, position: Number(state.position) }))
        .sort((a, b) => a.position - b.position);
    },
    async createIssue(connection, issue) {
      const input = {
        teamId: issue.teamId,
        title: issue.title,
        description: issue.description,
        ...(issue.projectId ? { projectId: issue.projectId } : {}),
        ...(issue.stateId ? { stateId: issue.stateId } : {}),
      };
      const data = await request<{ issueCreate: { success: boolean; issue: RawIssue | null } }>(
        connection,
        'create an issue',
        ISSUE_CREATE,
        {
          input,
        },
      );
      if (!data.issueCreate.success || !data.issueCreate.issue) throw new TrackerError('invalid', 'Linear: create an issue: not created');
      return toIssue(data.issueCreate.issue);
    },
    async getIssue(connection, idOrIdentifier) {
      const data = await request<{ issue: RawIssue | null }>(connection, `read issue ${idOrIdentifier}`, ISSUE, { id: idOrIdentifier });
      if (!data.issue) throw new TrackerError('not_found', `Linear: issue ${idOrIdentifier} not found`);
      return toIssue(data.issue);
    },
    async updateIssue(connection, id, change) {
      const data = await request<{ issueUpdate: { success: boolean; issue: RawIssue | null } }>(
        connection,
        'update an issue',
        ISSUE_UPDATE,
        {
          id,
          input: change,
        },
      );
      if (!data.issueUpdate.success || !data.issueUpdate.issue) throw new TrackerError('invalid', 'Linear: update an issue: not updated');
      return toIssue(data.issueUpdate.issue);
    },
  };
}

/**
 * A failed Linear call as the service acts on it. Linear answers errors in GraphQL's body, typed
 * in `extensions.type` (the SDK's LinearErrorType); a spent rate limit is `ratelimited` (code
 * RATELIMITED) with `X-RateLimit-Requests-Reset` (epoch ms) or `Retry-After`.
 */
export function linearFailure(what: string, error: unknown): TrackerError {
  if (error instanceof TrackerError) return error;
  const blocked = blockedCause(error);
  if (blocked) return new TrackerError('blocked', `Linear: ${what}: ${blocked}`);
  const hasResponse = Boolean((error as { response?: unknown })?.response);
  if (!hasResponse) {
    // The fetch itself failed (refused connection, time limit): no answer to parse.
    const message = (error as { message?: string })?.message ?? String(error);
    const cause = (error as { cause?: { message?: string } })?.cause?.message;
    return new TrackerError('unavailable', `Linear: ${what}: ${message}${cause ? `: ${cause}` : ''}`.slice(0, 400));
  }
  const parsed = parseLinearError(error as Parameters<typeof parseLinearError>[0]);
  const status = parsed.status ?? 0;
  const said = (parsed.errors?.[0]?.message ?? parsed.message ?? '').slice(0, 300);
  const text = `Linear: ${what}: ${said || `HTTP ${status}`}`;
  switch (parsed.type) {
    case LinearErrorType.Ratelimited: {
      const limited = parsed as { retryAfter?: number; requestsResetAt?: number; complexityResetAt?: number };
      const wait = retryAfterMs(limited.retryAfter, limited.requestsResetAt ?? limited.complexityResetAt) ?? 60_000;
      return new TrackerError('rate_limited', `${text} (rate limited)`, wait);
    }
    case LinearErrorType.AuthenticationError:
      // The SDK also reads a bare 4xx without a GraphQL error as an authentication error.
      if (status === 401 || parsed.errors?.[0]?.type === LinearErrorType.AuthenticationError) {
        return new TrackerError('unauthorized', `Linear refused the API key (${what}: ${said || `HTTP ${status}`})`);
      }
      return status === 404 ? new TrackerError('not_found', text) : new TrackerError('invalid', text);
    case LinearErrorType.Forbidden:
      return new TrackerError('forbidden', `Linear refused the API key a permission (${what}: ${said || `HTTP ${status}`})`);
    case LinearErrorType.NetworkError:
    case LinearErrorType.InternalError:
    case LinearErrorType.LockTimeout:
    case LinearErrorType.BootstrapError:
      return new TrackerError('unavailable', text);
    default:
      if (status >= 500) return new TrackerError('unavailable', text);
      if (/not found/i.test(said)) return new TrackerError('not_found', text);
      return new TrackerError('invalid', text);
  }
}
