import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stopWhenDone } from './lifecycle.js';

/*
 * Stand-ins for GitHub's REST API and Linear's GraphQL API, on 127.0.0.1, answering the calls the
 * service makes as the trackers' documentation shows them: the same paths and bodies, the same
 * refusals (401 with "Bad credentials", 403 or 429 with GitHub's rate-limit headers, 422
 * "Validation Failed", 5xx; Linear's GraphQL errors typed in `extensions`, RATELIMITED with
 * X-RateLimit-Requests-Reset). No test reaches github.com or linear.app.
 *
 * Like the real trackers, each sends its signed webhooks when an issue's state changes, through
 * the API (our own pushes, which the service must recognise when they come back) or by a person
 * (`closeIssue`, `moveIssue`: the change a test makes "in the tracker").
 */

export type TrackerCall = { method: string; path: string; headers: IncomingMessage['headers']; body: any; operation?: string };

/** An injected answer for the next matching calls: the failure a test wants the service to meet. */
export type InjectedAnswer = {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** How many calls get it (default 1). */
  times?: number;
  /** Which calls (default: any). */
  match?: (call: TrackerCall) => boolean;
};

export type WebhookSent = { status: number; body: string; event: unknown };

type Webhook = { url: string; secret: string };

/** Closes when the test (or, started in a hook, the file) is done. */
async function listen(
  handler: (req: IncomingMessage, res: ServerResponse, raw: string) => void,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  let closed: Promise<void> | undefined;
  const close = () => {
    closed ??= (async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    })();
    return closed;
  };
  stopWhenDone(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close };
}

function takeInjected(injected: InjectedAnswer[], call: TrackerCall): InjectedAnswer | undefined {
  const index = injected.findIndex((answer) => !answer.match || answer.match(call));
  if (index < 0) return undefined;
  const answer = injected[index] as InjectedAnswer;
  answer.times = (answer.times ?? 1) - 1;
  if (answer.times <= 0) injected.splice(index, 1);
  return answer;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers }).end(text);
}

async function postWebhook(webhook: Webhook, headers: Record<string, string>, body: string): Promise<WebhookSent> {
  const response = await fetch(webhook.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: await response.text(), event: JSON.parse(body) };
}

// GitHub

export type GithubIssueRecord = {
  id: number;
  node_id: string;
  number: number;
  title: string;
  body: string;
  state: 'open' | 'closed';
  state_reason: 'completed' | 'not_planned' | 'reopened' | null;
  labels: string[];
  updated_at: string;
};

export type GithubStandin = {
  /** The API's base URL (an integration's api_url). */
  url: string;
  token: string;
  repository: string;
  calls: TrackerCall[];
  issues: Map<number, GithubIssueRecord>;
  /** Where its webhooks go; set by the test once the integration exists. */
  webhook: Webhook | undefined;
  webhooks: WebhookSent[];
  inject(answer: InjectedAnswer): void;
  /** An issue made "by a person" in the repository. */
  addIssue(title: string): GithubIssueRecord;
  /** A person closes an issue (or reopens it): GitHub's `issues` webhook follows. */
  closeIssue(number: number, reason?: 'completed' | 'not_planned'): Promise<WebhookSent | undefined>;
  reopenIssue(number: number): Promise<WebhookSent | undefined>;
  /** The `issues` webhook of an issue as GitHub signs it (a test's own delivery, e.g. a redelivery). */
  signedDelivery(
    action: 'closed' | 'reopened',
    number: number,
    options?: { deliveryId?: string; secret?: string; updatedAt?: string },
  ): {
    headers: Record<string, string>;
    body: string;
  };
  /** Webhook deliveries still under way. */
  settled(): Promise<void>;
  close(): Promise<void>;
};

const githubIssueJson = (base: string, repository: string, issue: GithubIssueRecord) => ({
  id: issue.id,
  node_id: issue.node_id,
  number: issue.number,
  title: issue.title,
  body: issue.body,
  state: issue.state,
  state_reason: issue.state_reason,
  labels: issue.labels.map((name, index) => ({ id: index + 1, name, color: 'ededed', default: false })),
  html_url: `https://github.example/${repository}/issues/${issue.number}`,
  url: `${base}/repos/${repository}/issues/${issue.number}`,
  user: { login: 'octocat', id: 1 },
  comments: 0,
  created_at: issue.updated_at,
  updated_at: issue.updated_at,
  closed_at: issue.state === 'closed' ? issue.updated_at : null,
});

/**
 * GitHub's REST API for one repository and one token: GET /user/repos (paginated with Link, as
 * GitHub pages), POST /repos/{owner}/{repo}/issues (201), GET and PATCH
 * /repos/{owner}/{repo}/issues/{number}.
 */
export async function startGithubStandin(
  options: { repository?: string; token?: string; extraRepositories?: number } = {},
): Promise<GithubStandin> {
  const repository = options.repository ?? 'acme/app';
  const token = options.token ?? `github_pat_${randomUUID().replaceAll('-', '')}`;
  const repositories = [
    repository,
    ...Array.from({ length: options.extraRepositories ?? 0 }, (_, index) => `${repository.split('/')[0]}/other-${index + 1}`),
  ];
  const calls: TrackerCall[] = [];
  const injected: InjectedAnswer[] = [];
  const issues = new Map<number, GithubIssueRecord>();
  const pending = new Set<Promise<unknown>>();
  let next = 1;
  let base = '';
  const standin: GithubStandin = {
    url: '',
    token,
    repository,
    calls,
    issues,
    webhook: undefined,
    webhooks: [],
    inject: (answer) => injected.push(answer),
    addIssue(title) {
      const issue = newIssue(title, '');
      return issue;
    },
    closeIssue: (number, reason = 'completed') => changeState(number, 'closed', reason),
    reopenIssue: (number) => changeState(number, 'open', 'reopened'),
    signedDelivery(action, number, given = {}) {
      const issue = issues.get(number);
      if (!issue) throw new Error(`no issue #${number}`);
      const body = JSON.stringify({
        action,
        issue: { ...githubIssueJson(base, repository, issue), updated_at: given.updatedAt ?? issue.updated_at },
        repository: { id: 42, name: repository.split('/')[1], full_name: repository, owner: { login: repository.split('/')[0] } },
        sender: { login: 'octocat', id: 1 },
      });
      const secret = given.secret ?? standin.webhook?.secret ?? '';
      return {
        body,
        headers: {
          'x-github-event': 'issues',
          'x-github-delivery': given.deliveryId ?? randomUUID(),
          'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
          'user-agent': 'GitHub-Hookshot/stand-in',
        },
      };
    },
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    close: async () => {},
  };

  function newIssue(title: string, body: string, labels: string[] = []): GithubIssueRecord {
    const number = next++;
    const issue: GithubIssueRecord = {
      id: 1000 + number,
      node_id: `I_kwDO${number}`,
      number,
      title,
      body,
      state: 'open',
      state_reason: null,
      labels,
      updated_at: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    issues.set(number, issue);
    return issue;
  }

  /** A state change, by the API or a person: GitHub then sends `issues` closed or reopened. */
  function changeState(
    number: number,
    state: 'open' | 'closed',
    reason: GithubIssueRecord['state_reason'],
  ): Promise<WebhookSent | undefined> {
    const issue = issues.get(number);
    if (!issue) throw new Error(`no issue #${number}`);
    const was = issue.state;
    issue.state = state;
    issue.state_reason = reason;
    issue.updated_at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    if (was === state || !standin.webhook) return Promise.resolve(undefined);
    const delivery = standin.signedDelivery(state === 'closed' ? 'closed' : 'reopened', number);
    const sent = postWebhook(standin.webhook, delivery.headers, delivery.body).then((result) => {
      standin.webhooks.push(result);
      return result;
    });
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
    return sent;
  }

  const server = await listen((req, res, raw) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    let body: any = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // kept as text
    }
    const call: TrackerCall = { method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body };
    calls.push(call);
    const answer = takeInjected(injected, call);
    if (answer) return send(res, answer.status, answer.body ?? { message: `stand-in answer ${answer.status}` }, answer.headers);
    const auth = req.headers.authorization ?? '';
    if (auth !== `token ${token}` && auth !== `Bearer ${token}`) {
      return send(res, 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    }
    const rateHeaders = {
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4999',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
    };
    if (req.method === 'GET' && url.pathname === '/user/repos') {
      const perPage = Number(url.searchParams.get('per_page') ?? 30);
      const page = Number(url.searchParams.get('page') ?? 1);
      const slice = repositories.slice((page - 1) * perPage, page * perPage);
      const last = Math.max(1, Math.ceil(repositories.length / perPage));
      const link: Record<string, string> =
        page < last
          ? {
              link: `<${base}/user/repos?per_page=${perPage}&page=${page + 1}>; rel="next", <${base}/user/repos?per_page=${perPage}&page=${last}>; rel="last"`,
            }
          : {};
      return send(
        res,
        200,
        slice.map((fullName, index) => ({
          id: 42 + index,
          name: fullName.split('/')[1],
          full_name: fullName,
          private: index % 2 === 1,
          html_url: `https://github.example/${fullName}`,
          owner: { login: fullName.split('/')[0] },
          permissions: { admin: false, push: true, pull: true },
        })),
        { ...rateHeaders, ...link },
      );
    }
    const issuesPath = /^\/repos\/([^/]+)\/([^/]+)\/issues(?:\/(\d+))?$/.exec(url.pathname);
    if (!issuesPath) return send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
    if (`${issuesPath[1]}/${issuesPath[2]}`.toLowerCase() !== repository.toLowerCase()) {
      return send(res, 404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest/issues/issues' });
    }
    const number = issuesPath[3] === undefined ? undefined : Number(issuesPath[3]);
    if (req.method === 'POST' && number === undefined) {
      if (typeof body?.title !== 'string' || body.title === '') {
        return send(res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'Issue', code: 'missing_field', field: 'title' }],
          documentation_url: 'https://docs.github.com/rest/issues/issues#create-an-issue',
          status: '422',
        });
      }
      const issue = newIssue(body.title, body.body ?? '', Array.isArray(body.labels) ? body.labels : []);
      return send(res, 201, githubIssueJson(base, repository, issue), {
        ...rateHeaders,
        location: `${base}/repos/${repository}/issues/${issue.number}`,
      });
    }
    const issue = number === undefined ? undefined : issues.get(number);
    if (!issue)
      return send(res, 404, {
        message: 'Not Found',
        documentation_url: 'https://docs.github.com/rest/issues/issues#get-an-issue',
        status: '404',
      });
    if (req.method === 'GET') return send(res, 200, githubIssueJson(base, repository, issue), rateHeaders);
    if (req.method === 'PATCH') {
      if (body?.state_reason === 'not_planned' && body?.state !== 'closed' && issue.state !== 'closed') {
        return send(res, 422, {
          message: 'Validation Failed',
          errors: [{ resource: 'Issue', code: 'invalid', field: 'state_reason' }],
          status: '422',
        });
      }
      if (Array.isArray(body?.labels)) issue.labels = body.labels;
      if (typeof body?.body === 'string') issue.body = body.body;
      if (typeof body?.title === 'string') issue.title = body.title;
      if (body?.state === 'open' || body?.state === 'closed') {
        void changeState(issue.number, body.state, body.state_reason ?? (body.state === 'closed' ? 'completed' : 'reopened'));
      } else {
        issue.updated_at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      }
      return send(res, 200, githubIssueJson(base, repository, issue), rateHeaders);
    }
    return send(res, 404, { message: 'Not Found' });
  });
  base = server.url;
  standin.url = server.url;
  standin.close = server.close;
  return standin;
}

// Linear

export type LinearIssueRecord = {
  id: string;
  identifier: string;
  number: number;
  title: string;
  description: string;
  stateId: string;
  teamId: string;
  projectId: string | null;
};

export type LinearStandin = {
  /** The GraphQL endpoint (an integration's api_url). */
  url: string;
  apiKey: string;
  team: { id: string; key: string; name: string };
  /** The team's workflow states, in board order. */
  states: { id: string; name: string; type: string; position: number }[];
  calls: TrackerCall[];
  issues: Map<string, LinearIssueRecord>;
  webhook: (Webhook & { webhookId: string }) | undefined;
  webhooks: WebhookSent[];
  inject(answer: InjectedAnswer): void;
  /** An issue made "by a person" in the team. */
  addIssue(title: string): LinearIssueRecord;
  stateNamed(name: string): { id: string; name: string; type: string; position: number };
  /** A person moves an issue to a state: Linear's `Issue` `update` webhook follows. */
  moveIssue(identifier: string, stateName: string): Promise<WebhookSent | undefined>;
  /** The `Issue` `update` webhook of a state change as Linear signs it. */
  signedDelivery(
    issue: LinearIssueRecord,
    fromStateId: string,
    options?: { timestamp?: number; secret?: string },
  ): { headers: Record<string, string>; body: string };
  settled(): Promise<void>;
  close(): Promise<void>;
};

const linearError = (message: string, type: string, code: string, statusCode: number, presentable: string) => ({
  errors: [{ message, extensions: { type, code, statusCode, userError: true, userPresentableMessage: presentable } }],
});

/**
 * Linear's GraphQL API for one team and one API key: teams, workflowStates (by team),
 * issueCreate, issueUpdate, and issue by id or identifier. Errors are Linear's: HTTP 400 with a
 * GraphQL error typed in `extensions` (`authentication error`, `ratelimited`, `invalid input`).
 */
export async function startLinearStandin(options: { apiKey?: string; teamKey?: string } = {}): Promise<LinearStandin> {
  const apiKey = options.apiKey ?? `lin_api_${randomUUID().replaceAll('-', '')}`;
  const key = options.teamKey ?? 'ENG';
  const team = { id: randomUUID(), key, name: 'Engineering' };
  const states = [
    { name: 'Triage', type: 'triage' },
    { name: 'Backlog', type: 'backlog' },
    { name: 'Todo', type: 'unstarted' },
    { name: 'In Progress', type: 'started' },
    { name: 'In Review', type: 'started' },
    { name: 'Done', type: 'completed' },
    { name: 'Canceled', type: 'canceled' },
    { name: 'Duplicate', type: 'canceled' },
  ].map((state, index) => ({ id: randomUUID(), ...state, position: index }));
  const calls: TrackerCall[] = [];
  const injected: InjectedAnswer[] = [];
  const issues = new Map<string, LinearIssueRecord>();
  const pending = new Set<Promise<unknown>>();
  let next = 1;
  const stateNamed = (name: string) => {
    const state = states.find((entry) => entry.name === name);
    if (!state) throw new Error(`no state ${name}`);
    return state;
  };
  const issueJson = (issue: LinearIssueRecord) => {
    const state = states.find((entry) => entry.id === issue.stateId) as (typeof states)[number];
    return {
      id: issue.id,
      identifier: issue.identifier,
      number: issue.number,
      url: `https://linear.example/acme/issue/${issue.identifier}/${issue.title.toLowerCase().replace(/\W+/g, '-')}`,
      title: issue.title,
      description: issue.description,
      state: { id: state.id, name: state.name, type: state.type },
      team: { id: team.id },
    };
  };
  const standin: LinearStandin = {
    url: '',
    apiKey,
    team,
    states,
    calls,
    issues,
    webhook: undefined,
    webhooks: [],
    inject: (answer) => injected.push(answer),
    addIssue: (title) => newIssue({ title, description: '', stateId: stateNamed('Backlog').id, projectId: null }),
    stateNamed,
    moveIssue(identifier, stateName) {
      const issue = [...issues.values()].find((entry) => entry.identifier === identifier);
      if (!issue) throw new Error(`no issue ${identifier}`);
      return changeState(issue, stateNamed(stateName).id);
    },
    signedDelivery(issue, fromStateId, given = {}) {
      const state = states.find((entry) => entry.id === issue.stateId) as (typeof states)[number];
      const now = new Date();
      const body = JSON.stringify({
        action: 'update',
        type: 'Issue',
        actor: { id: randomUUID(), type: 'user', name: 'Jane' },
        createdAt: now.toISOString(),
        data: {
          ...issueJson(issue),
          stateId: state.id,
          state: { id: state.id, name: state.name, type: state.type, color: '#5e6ad2' },
          teamId: team.id,
          team: { id: team.id, key: team.key, name: team.name },
          updatedAt: now.toISOString(),
        },
        updatedFrom: { stateId: fromStateId, updatedAt: now.toISOString() },
        url: issueJson(issue).url,
        organizationId: 'org-stand-in',
        webhookTimestamp: given.timestamp ?? now.getTime(),
        webhookId: standin.webhook?.webhookId ?? 'webhook-stand-in',
      });
      const secret = given.secret ?? standin.webhook?.secret ?? '';
      return {
        body,
        headers: {
          'linear-signature': createHmac('sha256', secret).update(body).digest('hex'),
          'linear-delivery': randomUUID(),
          'linear-event': 'Issue',
          'user-agent': 'Linear-Webhook',
        },
      };
    },
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
    close: async () => {},
  };

  function newIssue(fields: { title: string; description: string; stateId: string; projectId: string | null }): LinearIssueRecord {
    const number = next++;
    const issue: LinearIssueRecord = { id: randomUUID(), identifier: `${key}-${number}`, number, teamId: team.id, ...fields };
    issues.set(issue.id, issue);
    return issue;
  }

  function changeState(issue: LinearIssueRecord, stateId: string): Promise<WebhookSent | undefined> {
    const from = issue.stateId;
    issue.stateId = stateId;
    if (from === stateId || !standin.webhook) return Promise.resolve(undefined);
    const delivery = standin.signedDelivery(issue, from);
    const sent = postWebhook(standin.webhook, delivery.headers, delivery.body).then((result) => {
      standin.webhooks.push(result);
      return result;
    });
    pending.add(sent);
    void sent.finally(() => pending.delete(sent));
    return sent;
  }

  const server = await listen((req, res, raw) => {
    let body: any;
    try {
      body = JSON.parse(raw);
    } catch {
      return send(res, 400, { errors: [{ message: 'Must provide query string.' }] });
    }
    const query: string = body?.query ?? '';
    const operation = /\b(issueCreate|issueUpdate|workflowStates|teams|issue)\s*\(/.exec(query)?.[1] ?? 'unknown';
    const call: TrackerCall = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, operation };
    calls.push(call);
    const answer = takeInjected(injected, call);
    if (answer)
      return send(res, answer.status, answer.body ?? { errors: [{ message: `stand-in answer ${answer.status}` }] }, answer.headers);
    const auth = req.headers.authorization ?? '';
    if (auth !== apiKey && auth !== `Bearer ${apiKey}`) {
      return send(
        res,
        400,
        linearError(
          'Authentication required, not authenticated',
          'authentication error',
          'AUTHENTICATION_ERROR',
          401,
          'You need to authenticate to access this operation.',
        ),
      );
    }
    const variables = body.variables ?? {};
    const rateHeaders = {
      'x-ratelimit-requests-limit': '1500',
      'x-ratelimit-requests-remaining': '1499',
      'x-ratelimit-requests-reset': String(Date.now() + 3_600_000),
    };
    const notFound = () =>
      send(res, 400, {
        data: null,
        ...linearError('Entity not found: Issue', 'invalid input', 'INPUT_ERROR', 400, 'Could not find referenced Issue.'),
      });
    switch (operation) {
      case 'teams':
        return send(res, 200, { data: { teams: { nodes: [team], pageInfo: { hasNextPage: false, endCursor: null } } } }, rateHeaders);
      case 'workflowStates': {
        const teamId = variables.teamId;
        return send(res, 200, { data: { workflowStates: { nodes: teamId === team.id ? states : [] } } }, rateHeaders);
      }
      case 'issueCreate': {
        const input = variables.input ?? {};
        if (input.teamId !== team.id) {
          return send(res, 400, {
            data: null,
            ...linearError('Entity not found: Team', 'invalid input', 'INPUT_ERROR', 400, 'Could not find referenced Team.'),
          });
        }
        const issue = newIssue({
          title: input.title,
          description: input.description ?? '',
          stateId: input.stateId ?? stateNamed('Triage').id,
          projectId: input.projectId ?? null,
        });
        return send(res, 200, { data: { issueCreate: { success: true, issue: issueJson(issue) } } }, rateHeaders);
      }
      case 'issueUpdate': {
        const issue = issues.get(variables.id) ?? [...issues.values()].find((entry) => entry.identifier === variables.id);
        if (!issue) return notFound();
        const input = variables.input ?? {};
        if (typeof input.description === 'string') issue.description = input.description;
        if (typeof input.stateId === 'string') void changeState(issue, input.stateId);
        return send(res, 200, { data: { issueUpdate: { success: true, issue: issueJson(issue) } } }, rateHeaders);
      }
      case 'issue': {
        const id = String(variables.id ?? '');
        const issue = issues.get(id) ?? [...issues.values()].find((entry) => entry.identifier === id.toUpperCase());
        if (!issue) return notFound();
        return send(res, 200, { data: { issue: issueJson(issue) } }, rateHeaders);
      }
      default:
        return send(res, 400, {
          errors: [
            { message: `Cannot query field "${operation}"`, extensions: { type: 'graphql error', code: 'GRAPHQL_VALIDATION_FAILED' } },
          ],
        });
    }
  });
  standin.url = `${server.url}/graphql`;
  standin.close = server.close;
  return standin;
}
