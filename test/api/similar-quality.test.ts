import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { filingOrder, labelledRequests } from '../helpers/similar-fixture.js';

/*
 * The quality of GET /feedbacks/similar on the labelled set (issue 40): every request of
 * test/fixtures/similar-requests.json is filed in order through POST /feedbacks, and before each
 * later member of a duplicate group is filed, its title is sent as `q`, as the widget sends what
 * a user types. recall@5: the group's first filed item is among the 5 answered; precision@1: the
 * first answer is of the same group. The floors hold the figures measured when this was written
 * (docs/api-guide.md), a little under them, so a change that makes matching worse fails here.
 */

const RECALL_AT_5_FLOOR = 0.8;
const PRECISION_AT_1_FLOOR = 0.57;

const server = useTestServer({ workers: false, env: { RATE_LIMIT_API: '100000/s' } });
let project: TestProject;

beforeAll(async () => {
  project = await createProject(server, { plan: 'pro' });
});

describe('similar requests on the labelled set', () => {
  it('has at least 300 requests and 60 duplicate groups', () => {
    const { groups, singles } = labelledRequests();
    expect(groups.length).toBeGreaterThanOrEqual(60);
    expect(groups.every((members) => members.length >= 2)).toBe(true);
    expect(groups.flat().length + singles.length).toBeGreaterThanOrEqual(300);
  });

  it(`finds the first filed item of a group in the top 5 for a later member (recall@5 ≥ ${RECALL_AT_5_FLOOR}, precision@1 ≥ ${PRECISION_AT_1_FLOOR})`, async () => {
    const groupOf = new Map<string, number | null>();
    const firstOf = new Map<number, string>();
    let queries = 0;
    let found = 0;
    let topRight = 0;
    const misses: string[] = [];
    for (const request of filingOrder()) {
      if (request.group !== null && !request.first) {
        const answer = await server.request('GET', `/api/v1/feedbacks/similar?q=${encodeURIComponent(request.title)}`, {
          apiKey: project.apiKey,
        });
        expect(answer.status).toBe(200);
        const ids: string[] = answer.body.map((item: { id: string }) => item.id);
        queries += 1;
        if (ids.includes(firstOf.get(request.group) as string)) found += 1;
        else misses.push(request.title);
        if (ids[0] !== undefined && groupOf.get(ids[0]) === request.group) topRight += 1;
        else if (process.env.SIMILAR_DEBUG)
          console.log(
            `${request.title} => ${answer.body
              .slice(0, 2)
              .map((i: { title: string; score: number }) => `${i.title} (${i.score})`)
              .join(' ; ')}`,
          );
      }
      const created = await server.request('POST', '/api/v1/feedbacks', {
        apiKey: project.apiKey,
        body: { ...request, category: 'feature_request', userId: `u-${randomUUID()}` },
      });
      expect(created.status).toBe(200);
      groupOf.set(created.body.id, request.group);
      if (request.first && request.group !== null) firstOf.set(request.group, created.body.id);
    }
    const recall = found / queries;
    const precision = topRight / queries;
    console.log(`similar requests: ${queries} queries, recall@5 ${recall.toFixed(3)}, precision@1 ${precision.toFixed(3)}`);
    console.log(`missed: ${misses.join(' | ')}`);
    expect(recall).toBeGreaterThanOrEqual(RECALL_AT_5_FLOOR);
    expect(precision).toBeGreaterThanOrEqual(PRECISION_AT_1_FLOOR);
  }, 120_000);
});
