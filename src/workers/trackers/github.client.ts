import { Octokit } from '@octokit/rest';
import type { Logger } from '../../core/logger.js';
import { type GithubApi, type GithubIssue, type GithubState, type TrackerConnection, TrackerError } from '../../core/trackers.js';
import type { GuardedHttp } from './guarded-fetch.js';
import { blockedCause, retryAfterMs } from './tracker-errors.js';

/** How many repositories the picker is offered at most (10 pages of 100). */
const MAX_REPOSITORIES = 1_000;

type RestIssue = {
  number: number;
  html_url: string;
  title: string;
  body?: string | null;
  state: string;
  state_reason?: string | null;
  labels: (string | { name?: string | null })[];
};

/** GitHub's state and reason as a status map names them (core/trackers.ts GITHUB_STATES). */
export function githubState(state: string, reason: string | null | undefined): GithubState {
  if (state !== 'closed') return 'open';
  return reason === 'not_planned' ? 'not_planned' : 'closed';
}

function toIssue(issue: RestIssue): GithubIssue {
  return {
    number: issue.number,
    html_url: issue.html_url,
    title: issue.title,
    body: issue.body ?? '',
    state: githubState(issue.state, issue.state_reason),
    labels: issue.labels.map((label) => (typeof label === 'string' ? label : (label.name ?? ''))).filter((name) => name !== ''),
  };
}

function split(repository: string): { owner: string; repo: string } {
  const [owner = '', repo = ''] = repository.split('/');
  return { owner, repo };
}

/**
 * GitHub's REST API through @octokit/rest, one client per call (the token and the base URL are
 * the integration's), its fetch behind the SSRF guard. Octokit's retry and throttling plugins are
 * not used: a failed call becomes a TrackerError, and the caller (the request, or the deliveries'
 * retries with Retry-After) decides what happens next.
 */
export function githubApi(http: GuardedHttp, logger: Logger): GithubApi {
  const log = {
    debug: (message: string) => logger.debug({ tracker: 'github' }, message),
    info: (message: string) => logger.debug({ tracker: 'github' }, message),
    warn: (message: string) => logger.warn({ tracker: 'github' }, message),
    error: (message: string) => logger.debug({ tracker: 'github' }, message),
  };
  const client = (connection: TrackerConnection) =>
    new Octokit({
      auth: connection.token,
      baseUrl: connection.apiUrl.replace(/\/+$/, ''),
      userAgent: 'feedback-service',
      request: { fetch: http.fetch },
      log,
    });
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw githubFailure(what, error);
    }
  };
  return {
    listRepositories: (connection) =>
      call('list repositories', async () => {
        const octokit = client(connection);
        const repositories: { full_name: string; private: boolean; html_url: string }[] = [];
        for await (const page of octokit.paginate.iterator(octokit.rest.repos.listForAuthenticatedUser, {
          per_page: 100,
          sort: 'updated',
        })) {
          for (const repository of page.data) {
            repositories.push({ full_name: repository.full_name, private: repository.private, html_url: repository.html_url });
          }
          if (repositories.length >= MAX_REPOSITORIES) break;
        }
        return repositories.slice(0, MAX_REPOSITORIES);
      }),
    createIssue: (connection, repository, issue) =>
      call('create an issue', async () => {
        const { data } = await client(connection).rest.issues.create({ ...split(repository), ...issue });
        return toIssue(data as RestIssue);
      }),
    getIssue: (connection, repository, number) =>
      call(`read issue #${number}`, async () => {
        const { data } = await client(connection).rest.issues.get({ ...split(repository), issue_number: number });
        return toIssue(data as RestIssue);
      }),
    updateIssue: (connection, repository, number, change) =>
      call(`update issue #${number}`, async () => {
        const { data } = await client(connection).rest.issues.update({ ...split(repository), issue_number: number, ...change });
        return toIssue(data as RestIssue);
      }),
  };
}

type OctokitFailure = {
  status?: number;
  message?: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
};

/**
 * A failed Octokit call as the service acts on it (core/trackers.ts TrackerFailure). GitHub
 * answers a spent rate limit with 403 or 429 and `x-ratelimit-remaining: 0` plus
 * `x-ratelimit-reset` (epoch seconds), a secondary limit with `retry-after` (seconds); any other
 * 403 means the token lacks a permission.
 */
export function githubFailure(what: string, error: unknown): TrackerError {
  if (error instanceof TrackerError) return error;
  const blocked = blockedCause(error);
  if (blocked) return new TrackerError('blocked', `GitHub: ${what}: ${blocked}`);
  const failure = error as OctokitFailure;
  const status = failure.status ?? 0;
  const headers = failure.response?.headers ?? {};
  const said = githubMessage(failure);
  const text = `GitHub: ${what}: HTTP ${status}${said ? ` ${said}` : ''}`;
  if (status === 401) return new TrackerError('unauthorized', `GitHub refused the token (${what}: HTTP 401${said ? ` ${said}` : ''})`);
  if (status === 403 || status === 429) {
    const wait = retryAfterMs(
      headers['retry-after'],
      String(headers['x-ratelimit-remaining'] ?? '') === '0' ? headers['x-ratelimit-reset'] : undefined,
    );
    if (wait !== null) return new TrackerError('rate_limited', `${text} (rate limited)`, wait);
    if (status === 429) return new TrackerError('rate_limited', `${text} (rate limited)`, 60_000);
    return new TrackerError('forbidden', `GitHub refused the token a permission (${what}: HTTP 403${said ? ` ${said}` : ''})`);
  }
  if (status === 404 || status === 410) return new TrackerError('not_found', text);
  if (status >= 500 || status === 0) {
    // Octokit reports a failed fetch (refused connection, timeout) as a 500 of its own, without a response.
    const cause = failure.response ? '' : `: ${causeMessage(error)}`;
    return new TrackerError('unavailable', `${text}${cause}`);
  }
  return new TrackerError('invalid', text);
}

function githubMessage(failure: OctokitFailure): string {
  const data = failure.response?.data as { message?: unknown; errors?: unknown } | undefined;
  if (data && typeof data.message === 'string') {
    const details = Array.isArray(data.errors)
      ? data.errors
          .map((entry) =>
            typeof entry === 'string'
              ? entry
              : ((entry as { message?: string; code?: string }).message ?? (entry as { code?: string }).code),
          )
          .filter(Boolean)
          .join('; ')
      : '';
    return `${data.message}${details ? ` (${details})` : ''}`.slice(0, 300);
  }
  return '';
}

function causeMessage(error: unknown): string {
  let current: unknown = error;
  const parts: string[] = [];
  for (let depth = 0; current && depth < 4; depth++) {
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && !parts.includes(message)) parts.push(message);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(': ').slice(0, 300);
}
