/** The one place tests create what they need: accounts, projects, feedback, members, integrations. */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Plan } from '../../src/core/plans.js';
import type { TestServer } from './server.js';
import { call } from './service.js';

export type TestAccount = { id: string; email: string; plan: Plan; adminToken: string };
export type TestProject = { id: string; name: string; apiKey: string; account: TestAccount };

/** Creates an account through the operator API. */
export async function createAccount(server: TestServer, plan: Plan = 'free'): Promise<TestAccount> {
  const email = `owner-${randomUUID()}@example.com`;
  const response = await server.request('POST', '/api/v1/admin/accounts', {
    bearer: server.operatorToken,
    body: { email, plan },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id, email, plan, adminToken: response.body.admin_token };
}

/** Creates a project (and, unless given, a fresh account that owns it). */
export async function createProject(
  server: TestServer,
  options: { plan?: Plan; account?: TestAccount; name?: string } = {},
): Promise<TestProject> {
  const account = options.account ?? (await createAccount(server, options.plan ?? 'free'));
  const name = options.name ?? `project ${randomUUID().slice(0, 8)}`;
  const response = await server.request('POST', '/api/v1/projects', { bearer: account.adminToken, body: { name } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id, name, apiKey: response.body.api_key, account };
}

export type FeedbackInput = {
  title?: string;
  description?: string;
  category?: string;
  userId?: string;
  userEmail?: string;
};

/** Creates a feedback item through POST /feedbacks and returns the response body. */
export async function createFeedback(server: TestServer, project: TestProject, input: FeedbackInput = {}) {
  const response = await server.request('POST', '/api/v1/feedbacks', {
    apiKey: project.apiKey,
    body: {
      title: input.title ?? 'Dark mode',
      description: input.description ?? 'Please add a dark theme.',
      category: input.category ?? 'feature_request',
      userId: input.userId ?? `creator-${randomUUID().slice(0, 8)}`,
      ...(input.userEmail === undefined ? {} : { userEmail: input.userEmail }),
    },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/** Operator action: change an account's plan. */
export async function setPlan(server: TestServer, account: TestAccount, plan: Plan) {
  const response = await server.request('PATCH', `/api/v1/admin/accounts/${account.id}`, {
    bearer: server.operatorToken,
    body: { plan },
  });
  expect(response.status).toBe(200);
}

/** Operator action: suspend or reinstate a project. */
export async function setSuspended(server: TestServer, project: TestProject, suspended: boolean) {
  const response = await server.request('PATCH', `/api/v1/admin/projects/${project.id}`, {
    bearer: server.operatorToken,
    body: { suspended },
  });
  expect(response.status).toBe(200);
}

export type TestMember = { id: string; email: string; adminToken: string; project: TestProject };

/** Adds a team member (the project's account must be on Team) and returns it with its token. */
export async function addMember(
  server: TestServer,
  project: TestProject,
  email = `member-${randomUUID()}@example.com`,
): Promise<TestMember> {
  const response = await server.request('POST', `/api/v1/projects/${project.id}/members`, {
    bearer: project.account.adminToken,
    body: { email },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return { id: response.body.id, email: response.body.email, adminToken: response.body.admin_token, project };
}

export type IntegrationInput = {
  kind: 'slack' | 'discord' | 'webhook';
  url: string;
  secret?: string;
  events?: string[] | null;
  enabled?: boolean;
};

/** Adds an integration (Pro or Team) and returns the response body (`secret` when the server generated one). */
export async function addIntegration(
  server: TestServer,
  project: TestProject,
  input: IntegrationInput = { kind: 'slack', url: 'https://hooks.slack.com/services/T000/B000/XXXX' },
) {
  const response = await server.request('POST', `/api/v1/projects/${project.id}/integrations`, {
    bearer: project.account.adminToken,
    body: input,
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/**
 * A project of a fresh Pro account on a service started as its own process (helpers/service.ts),
 * which has no TestServer: made over plain HTTP with the operator token.
 */
export async function createProjectOver(base: string, operatorToken: string): Promise<{ id: string; apiKey: string }> {
  const account = await call(base, 'POST', '/api/v1/admin/accounts', {
    bearer: operatorToken,
    body: { email: `owner-${randomUUID()}@example.com`, plan: 'pro' },
  });
  expect(account.status, JSON.stringify(account.body)).toBe(200);
  const project = await call(base, 'POST', '/api/v1/projects', { bearer: account.body.admin_token, body: { name: 'faults' } });
  expect(project.status, JSON.stringify(project.body)).toBe(200);
  return { id: project.body.id, apiKey: project.body.api_key };
}
