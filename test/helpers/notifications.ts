import { expect } from 'vitest';
import type { TestProject } from './factories.js';
import { eventually } from './redis.js';
import type { TestServer } from './server.js';

/**
 * Probes of the notification tests: the deliveries, read through the owner's API. Members and
 * integrations are made with helpers/factories.ts.
 */

export type Delivery = {
  id: string;
  notification_id: string;
  type: string;
  channel: string;
  recipient: string;
  integration_id: string | null;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
};

/** GET /projects/:id/deliveries with the owner's token. */
export async function listDeliveries(server: TestServer, project: TestProject, query: Record<string, string> = {}): Promise<Delivery[]> {
  const qs = new URLSearchParams({ limit: '500', ...query });
  const response = await server.request('GET', `/api/v1/projects/${project.id}/deliveries?${qs}`, { bearer: project.account.adminToken });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body;
}

/**
 * Waits until every notification of the project is expanded and none of its deliveries is
 * pending any more; returns the deliveries.
 */
export async function settledDeliveries(server: TestServer, project: TestProject, timeoutMs = 15_000): Promise<Delivery[]> {
  await eventually(`notifications of ${project.id} delivered`, timeoutMs, async () => {
    const [row] = await server.sql<{ undispatched: number; pending: number }[]>`
      select
        (select count(*)::int from notifications where project_id = ${project.id} and dispatched_at is null) as undispatched,
        (select count(*)::int from deliveries where project_id = ${project.id} and status = 'pending') as pending`;
    return row!.undispatched === 0 && row!.pending === 0;
  });
  return listDeliveries(server, project);
}

/** The notifications of a project, expanded or not. */
export async function notificationCount(server: TestServer, project: TestProject): Promise<number> {
  const [row] = await server.sql<{ n: number }[]>`select count(*)::int as n from notifications where project_id = ${project.id}`;
  return row!.n;
}
