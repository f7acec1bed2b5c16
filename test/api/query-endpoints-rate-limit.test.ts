import { describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { type TestServer, useTestServer } from '../helpers/server.js';

/*
 * The per-token rate limit of a published saved query (docs/project-sql.md, "Endpoints"): each
 * endpoint token has the API's request budget (RATE_LIMIT_API), here a small one. A file of its own:
 * embedded chDB holds one data directory per process, so one test server per file.
 */

async function savedQuery(s: TestServer, project: TestProject, text: string): Promise<string> {
  const r = await s.request('POST', `/api/v1/projects/${project.id}/saved-queries`, {
    bearer: project.account.adminToken,
    body: { name: 'q', sql: text },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.id;
}

async function publish(s: TestServer, project: TestProject, queryId: string) {
  const r = await s.request('POST', `/api/v1/projects/${project.id}/saved-queries/${queryId}/endpoint`, {
    bearer: project.account.adminToken,
    body: {},
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { id: string; token: string };
}

const call = (s: TestServer, id: string, token: string) => s.request('GET', `/api/v1/q/${id}`, { bearer: token });

const limited = useTestServer({ workers: false, env: { RATE_LIMIT_API: '12/min' } });

describe('the per-token rate limit', () => {
  it('answers 429 with Retry-After once the token’s budget is spent; another token has its own', async () => {
    const project = await createProject(limited, { plan: 'pro' });
    const first = await publish(limited, project, await savedQuery(limited, project, 'SELECT 4 AS four'));
    const second = await publish(limited, project, await savedQuery(limited, project, 'SELECT 5 AS five'));
    const statuses: number[] = [];
    for (let i = 0; i < 13; i++) statuses.push((await call(limited, first.id, first.token)).status);
    expect(statuses.slice(0, 12).every((s) => s === 200)).toBe(true);
    const refused = await call(limited, first.id, first.token);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call(limited, second.id, second.token)).status).toBe(200);
  });
});
