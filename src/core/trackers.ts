/*
 * The issue trackers a project's items can follow (docs/integrations.md): GitHub Issues and
 * Linear. What the HTTP layer and the workers share about them: the calls we make (TrackerGateway,
 * built once at start-up with the SSRF guard, src/workers/trackers/gateway.ts), the failures those
 * calls end in, how an issue is named, and the description an item gives its issue.
 */

export const TRACKER_KINDS = ['github', 'linear'] as const;
export type TrackerKind = (typeof TRACKER_KINDS)[number];

export const isTrackerKind = (kind: string): kind is TrackerKind => (TRACKER_KINDS as readonly string[]).includes(kind);

/** The API each tracker answers at unless the integration says otherwise (GitHub Enterprise Server, tests). */
export const DEFAULT_API_URLS: Record<TrackerKind, string> = {
  github: 'https://api.github.com',
  linear: 'https://api.linear.app/graphql',
};

/**
 * GitHub's issue states as a status map names them: `open`, `closed` (as completed, or as a
 * duplicate) and `not_planned` (closed as not planned).
 */
export const GITHUB_STATES = ['open', 'closed', 'not_planned'] as const;
export type GithubState = (typeof GITHUB_STATES)[number];

/** The types of Linear's workflow states; each team has its own states of these types. */
export const LINEAR_STATE_TYPES = ['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled'] as const;
export type LinearStateType = (typeof LINEAR_STATE_TYPES)[number];

/** What a tracker call needs: where, and with which token (the plain token, unsealed for the call). */
export type TrackerConnection = { apiUrl: string; token: string };

export type GithubRepository = { full_name: string; private: boolean; html_url: string };

export type GithubIssue = {
  number: number;
  html_url: string;
  title: string;
  body: string;
  state: GithubState;
  labels: string[];
};

export type GithubIssueChange = {
  state?: 'open' | 'closed';
  state_reason?: 'completed' | 'not_planned' | 'reopened';
  labels?: string[];
  body?: string;
};

export type LinearTeam = { id: string; key: string; name: string };
export type LinearWorkflowState = { id: string; name: string; type: string; position: number };

export type LinearIssue = {
  id: string;
  identifier: string;
  url: string;
  title: string;
  description: string;
  state: { id: string; name: string; type: string };
  team_id: string;
};

export interface GithubApi {
  /** The repositories the token reaches (at most 1,000, most recently updated first). */
  listRepositories(connection: TrackerConnection): Promise<GithubRepository[]>;
  createIssue(
    connection: TrackerConnection,
    repository: string,
    issue: { title: string; body: string; labels: string[] },
  ): Promise<GithubIssue>;
  getIssue(connection: TrackerConnection, repository: string, number: number): Promise<GithubIssue>;
  updateIssue(connection: TrackerConnection, repository: string, number: number, change: GithubIssueChange): Promise<GithubIssue>;
}

export interface LinearApi {
  listTeams(connection: TrackerConnection): Promise<LinearTeam[]>;
  /** A team's workflow states, in their order on the board. */
  listWorkflowStates(connection: TrackerConnection, teamId: string): Promise<LinearWorkflowState[]>;
  createIssue(
    connection: TrackerConnection,
    issue: { teamId: string; projectId: string | null; title: string; description: string; stateId: string | null },
  ): Promise<LinearIssue>;
  /** By id or by identifier (`ENG-42`). */
  getIssue(connection: TrackerConnection, idOrIdentifier: string): Promise<LinearIssue>;
  updateIssue(connection: TrackerConnection, id: string, change: { stateId?: string; description?: string }): Promise<LinearIssue>;
}

/** The tracker calls of the service, through the maintained clients, behind the SSRF guard. */
export interface TrackerGateway {
  github: GithubApi;
  linear: LinearApi;
  /**
   * Why an api_url is refused before any call (an IP literal the SSRF guard refuses, unless
   * ALLOW_PRIVATE_WEBHOOKS), or null. Host names are checked on every call, at connection time.
   */
  refusedApiUrl(url: string): string | null;
}

/**
 * How a tracker call failed, as the caller must act on it:
 * - `unauthorized`: the token was refused (401): the integration needs attention, never retried;
 * - `forbidden`: the token lacks a permission (403 without a rate limit): needs attention too;
 * - `rate_limited`: 429, or GitHub's 403 with its rate-limit headers, Linear's RATELIMITED: retry
 *   after `retryAfterMs`;
 * - `not_found`: the repository, team or issue is not there (or not visible to the token);
 * - `invalid`: the tracker refused the request itself (422, a GraphQL input error);
 * - `blocked`: the SSRF guard refused the address;
 * - `unavailable`: 5xx, a timeout, a network failure: worth retrying.
 */
export type TrackerFailure = 'unauthorized' | 'forbidden' | 'rate_limited' | 'not_found' | 'invalid' | 'blocked' | 'unavailable';

export class TrackerError extends Error {
  override name = 'TrackerError';
  constructor(
    readonly failure: TrackerFailure,
    message: string,
    /** rate_limited: how long to wait before the next call. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }

  /** Whether a later attempt may succeed without anyone changing anything. */
  get transient(): boolean {
    return this.failure === 'rate_limited' || this.failure === 'unavailable';
  }

  /** Whether the integration's token needs its owner: refused, or short of a permission. */
  get needsAttention(): boolean {
    return this.failure === 'unauthorized' || this.failure === 'forbidden';
  }
}

/** `owner/name` of a GitHub repository, as GitHub allows its characters. */
export const REPOSITORY_PATTERN = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})\/[A-Za-z0-9._-]{1,100}$/;

/**
 * What an owner may paste to link an existing issue: GitHub `#123`, `123` or the issue's URL
 * (`https://github.com/owner/name/issues/123`, or GitHub Enterprise's); Linear `ENG-42`, its URL
 * (`https://linear.app/team/issue/ENG-42/title`) or the issue's id. Null when it is none of these.
 */
export function parseIssueReference(
  kind: TrackerKind,
  text: string,
): { number: number; repository?: string } | { identifier: string } | null {
  const value = text.trim();
  if (kind === 'github') {
    const short = /^#?(\d{1,9})$/.exec(value);
    if (short) return { number: Number(short[1]) };
    const url = /^https?:\/\/[^/\s]+\/([^/\s]+\/[^/\s]+)\/issues\/(\d{1,9})(?:[/?#]\S*)?$/.exec(value);
    if (url && REPOSITORY_PATTERN.test(url[1] as string)) return { number: Number(url[2]), repository: url[1] as string };
    return null;
  }
  const identifier = /^([A-Za-z][A-Za-z0-9_]{0,9}-\d{1,9})$/.exec(value);
  if (identifier) return { identifier: (identifier[1] as string).toUpperCase() };
  const url = /^https?:\/\/[^/\s]+\/[^/\s]+\/issue\/([A-Za-z][A-Za-z0-9_]{0,9}-\d{1,9})(?:[/?#]\S*)?$/.exec(value);
  if (url) return { identifier: (url[1] as string).toUpperCase() };
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) return { identifier: value.toLowerCase() };
  return null;
}

/** The line of an issue's description that carries the votes: votes out rewrites it. */
export const VOTES_LINE_PREFIX = '**Votes:**';

export type IssueContent = {
  title: string;
  description: string;
  voteCount: number;
  /** The voters' combined MRR; null when none of them has one. */
  totalMrr: number | null;
  /** The item on the owners' dashboard. */
  itemUrl: string;
};

/** The votes line: `**Votes:** 3 · **Voters’ MRR:** 1,250`. */
export function votesLine(voteCount: number, totalMrr: number | null): string {
  const mrr = totalMrr === null ? 'none tracked' : totalMrr.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return `${VOTES_LINE_PREFIX} ${voteCount} · **Voters’ MRR:** ${mrr}`;
}

/** The description an item gives the issue made from it (markdown, for both trackers). */
export function issueDescription(content: IssueContent): string {
  return [
    content.description,
    '',
    '---',
    votesLine(content.voteCount, content.totalMrr),
    `[The item in Feedback](${content.itemUrl})`,
  ].join('\n');
}

/**
 * The description with its votes line brought up to date; null when it has none (an issue made
 * elsewhere and linked, whose description is its authors', or one whose line was removed).
 */
export function withVotesLine(description: string, voteCount: number, totalMrr: number | null): string | null {
  const lines = description.split('\n');
  const index = lines.findIndex((line) => line.startsWith(VOTES_LINE_PREFIX));
  if (index < 0) return null;
  lines[index] = votesLine(voteCount, totalMrr);
  return lines.join('\n');
}
