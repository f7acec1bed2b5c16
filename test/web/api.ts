import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { createProject } from '../helpers/factories.js';
import type { TestServer } from '../helpers/server.js';

/** An account of `plan` (made with the operator token) and one project with its API key. */
export async function accountWithProject(server: TestServer, plan: 'free' | 'pro' | 'team', projectName: string) {
  const project = await createProject(server, { plan, name: projectName });
  return { token: project.account.adminToken, projectId: project.id, apiKey: project.apiKey };
}

export async function createFeedback(server: TestServer, apiKey: string, title: string, extra: Record<string, unknown> = {}) {
  const response = await server.request('POST', '/api/v1/feedbacks', {
    apiKey,
    body: {
      title,
      description: `${title}: described by a user.`,
      category: 'feature_request',
      userId: `user-${randomBytes(3).toString('hex')}`,
      ...extra,
    },
  });
  expect(response.status).toBe(200);
  return response.body as { id: string; title: string; vote_count: number };
}

/** Waits until the project's admin summary counts `count` events in the window (ingestion is asynchronous). */
export async function waitForEvents(server: TestServer, token: string, projectId: string, query: string, count: number) {
  let last: unknown;
  // Generous: CI runs other test files beside this one.
  await eventually(`${count} events counted`, 60_000, async () => {
    const summary = await server.request('GET', `/api/v1/projects/${projectId}/metrics/summary?${query}`, { bearer: token });
    last = summary.body;
    return summary.status === 200 && summary.body.measures.event_count >= count;
  }).catch((error: Error) => {
    throw new Error(`${error.message}: ${JSON.stringify(last)}`);
  });
}
