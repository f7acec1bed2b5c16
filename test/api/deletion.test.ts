import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { projectRowCounts } from '../../src/olap/data-rights/erasure.js';
import { eventually } from '../helpers/eventually.js';
import { addMember, createFeedback, createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

describe('DELETE /projects/:id/feedbacks/:feedbackId', () => {
  it('deletes the item with its votes and comments, and the items merged into it; other items stay', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const bearer = project.account.adminToken;
    const item = await createFeedback(server, project, { title: 'To delete' });
    const merged = await createFeedback(server, project, { title: 'Duplicate' });
    const kept = await createFeedback(server, project, { title: 'Kept' });
    await server.request('POST', `/api/v1/feedbacks/${item.id}/votes`, { apiKey: project.apiKey, body: { userId: 'voter' } });
    await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      body: { userId: 'voter', content: 'hi' },
    });
    await server.request('POST', `/api/v1/feedbacks/${kept.id}/votes`, { apiKey: project.apiKey, body: { userId: 'voter' } });
    const merge = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${merged.id}/merge`, {
      bearer,
      body: { intoId: item.id },
    });
    expect(merge.status).toBe(200);

    const deleted = await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${item.id}`, { bearer });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
    expect(deleted.body).toMatchObject({
      id: item.id,
      title: 'To delete',
      vote_count: 3,
      comment_count: 1,
      merged_feedback_ids: [merged.id],
    });
    expect((await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: project.apiKey })).status).toBe(404);
    expect((await server.request('GET', `/api/v1/feedbacks/${merged.id}`, { apiKey: project.apiKey })).status).toBe(404);
    const left = await server.request('GET', '/api/v1/feedbacks?includeMerged=true', { apiKey: project.apiKey });
    expect(left.body.map((f: { id: string }) => f.id)).toEqual([kept.id]);
    expect(left.body[0].vote_count).toBe(2);
    const [rows] = await server.sql<{ n: number }[]>`
      select ((select count(*) from votes where feedback_id in (${item.id}, ${merged.id}))
            + (select count(*) from comments where feedback_id = ${item.id}))::int as n`;
    expect(rows?.n).toBe(0);
    expect((await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${item.id}`, { bearer })).status).toBe(404);
  });

  it('answers 404 for another project’s item or a malformed id, 403 for another account, 401 without a token', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const other = await createProject(server, { plan: 'pro' });
    const theirs = await createFeedback(server, other);
    const bearer = project.account.adminToken;
    expect((await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${theirs.id}`, { bearer })).status).toBe(404);
    expect((await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/nope`, { bearer })).status).toBe(404);
    expect((await server.request('DELETE', `/api/v1/projects/${other.id}/feedbacks/${theirs.id}`, { bearer })).status).toBe(403);
    expect((await server.request('DELETE', `/api/v1/projects/${other.id}/feedbacks/${theirs.id}`)).status).toBe(401);
    expect((await server.request('GET', `/api/v1/feedbacks/${theirs.id}`, { apiKey: other.apiKey })).status).toBe(200);
  });
});

describe('DELETE /projects/:id/feedbacks/:feedbackId/comments/:commentId (moderation)', () => {
  it('deletes one comment; comment_count follows; another item’s comment id is a 404', async () => {
    const project = await createProject(server);
    const bearer = project.account.adminToken;
    const item = await createFeedback(server, project);
    const other = await createFeedback(server, project, { title: 'Other' });
    const spam = await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      body: { userId: 'spammer', content: 'buy now' },
    });
    const fine = await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, {
      apiKey: project.apiKey,
      body: { userId: 'fan', content: 'great' },
    });
    expect(
      (await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${other.id}/comments/${spam.body.id}`, { bearer })).status,
    ).toBe(404);
    const deleted = await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${item.id}/comments/${spam.body.id}`, {
      bearer,
    });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual(spam.body);
    const comments = await server.request('GET', `/api/v1/feedbacks/${item.id}/comments`, { apiKey: project.apiKey });
    expect(comments.body).toEqual([fine.body]);
    expect((await server.request('GET', `/api/v1/feedbacks/${item.id}`, { apiKey: project.apiKey })).body.comment_count).toBe(1);
    expect(
      (await server.request('DELETE', `/api/v1/projects/${project.id}/feedbacks/${item.id}/comments/${spam.body.id}`, { bearer })).status,
    ).toBe(404);
  });
});

describe('DELETE /projects/:id?confirm=<name>', () => {
  it('deletes the project and all its data in PostgreSQL at once and in ClickHouse through its job', async () => {
    const project = await createProject(server, { plan: 'team', name: `Doomed ${randomUUID().slice(0, 6)}` });
    const survivor = await createProject(server, { account: project.account, name: 'Survivor' });
    const bearer = project.account.adminToken;
    const member = await addMember(server, project);
    for (const p of [project, survivor]) {
      const item = await createFeedback(server, p);
      await server.request('POST', `/api/v1/feedbacks/${item.id}/comments`, { apiKey: p.apiKey, body: { userId: 'u', content: 'c' } });
      await server.request('POST', '/api/v1/users/register', { apiKey: p.apiKey, body: { userId: 'u', mrr: 5 } });
      const batch = await server.request('POST', '/api/v1/events/batch', {
        apiKey: p.apiKey,
        body: {
          events: [
            { eventName: 'feedback_list', userId: 'u' },
            { eventName: 'x', userId: 'v' },
          ],
        },
      });
      expect(batch.status).toBe(200);
    }
    await server.eventsVisible();
    const target = { client: server.clickhouse };
    await eventually('the project’s rows in ClickHouse', 30_000, async () => {
      const counts = await projectRowCounts(target, project.id);
      return counts.facts >= 4 && counts.events === 2 && counts.events_by_user === 2; // feedback, vote, comment, registration
    });

    const wrong = await server.request('DELETE', `/api/v1/projects/${project.id}?confirm=${encodeURIComponent('Survivor')}`, { bearer });
    expect(wrong.status).toBe(400);
    expect(wrong.body.reason).toMatch(/^confirm:/);
    expect((await server.request('DELETE', `/api/v1/projects/${project.id}`, { bearer })).status).toBe(400);
    const byMember = await server.request('DELETE', `/api/v1/projects/${project.id}?confirm=${encodeURIComponent(project.name)}`, {
      bearer: member.adminToken,
    });
    expect(byMember.status).toBe(403);

    const deleted = await server.request('DELETE', `/api/v1/projects/${project.id}?confirm=${encodeURIComponent(project.name)}`, {
      bearer,
    });
    expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
    expect(deleted.body).toMatchObject({ project_id: project.id, project_name: project.name, status: 'pending', step: 'settle' });
    expect(deleted.headers.get('location')).toBe(`/api/v1/projects/deletions/${deleted.body.id}`);
    // PostgreSQL: gone at once, the API key with it.
    expect((await server.request('GET', `/api/v1/projects/${project.id}`, { bearer })).status).toBe(404);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: project.apiKey })).status).toBe(401);
    expect((await server.request('GET', '/api/v1/projects', { bearer: member.adminToken })).status).toBe(401);
    const [pg] = await server.sql<{ n: number }[]>`
      select ((select count(*) from feedbacks where project_id = ${project.id})
            + (select count(*) from sdk_users where project_id = ${project.id})
            + (select count(*) from project_members where project_id = ${project.id})
            + (select count(*) from notifications where project_id = ${project.id}))::int as n`;
    expect(pg?.n).toBe(0);
    // ClickHouse: the job deletes every row of the project, and only of it.
    let job = deleted.body;
    await eventually('the deletion job done', 30_000, async () => {
      const state = await server.request('GET', `/api/v1/projects/deletions/${deleted.body.id}`, { bearer });
      expect(state.status).toBe(200);
      job = state.body;
      return job.status === 'done';
    }).catch(() => undefined); // the expectation below shows where the job stopped
    expect(job).toMatchObject({ status: 'done', step: 'done', completed_at: expect.any(String) });
    expect(Object.values(await projectRowCounts(target, project.id)).map(Number)).toEqual([0, 0, 0, 0, 0]);
    const kept = await projectRowCounts(target, survivor.id);
    expect(Number(kept.events)).toBe(2);
    expect(Number(kept.events_by_user)).toBe(2);
    expect(Number(kept.facts)).toBeGreaterThanOrEqual(4);
    expect((await server.request('GET', '/api/v1/feedbacks', { apiKey: survivor.apiKey })).body).toHaveLength(1);
    // Only the owning account reads the job.
    const stranger = await createProject(server);
    expect(
      (await server.request('GET', `/api/v1/projects/deletions/${deleted.body.id}`, { bearer: stranger.account.adminToken })).status,
    ).toBe(404);
    expect((await server.request('GET', '/api/v1/projects/deletions/not-a-uuid', { bearer })).status).toBe(404);
  });
});
