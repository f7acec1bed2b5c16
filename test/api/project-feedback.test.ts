import { beforeAll, describe, expect, it } from 'vitest';
import { errorBody, MISSING_ID } from '../helpers/expect.js';
import { createFeedback, createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

const server = useTestServer();

const STATUSES = ['pending', 'approved', 'in_progress', 'testflight', 'completed', 'rejected'] as const;

/** PATCH /projects/:id/feedbacks/:feedbackId with the project's admin token. */
function patchFeedback(project: TestProject, feedbackId: string, body: unknown) {
  return server.request('PATCH', `/api/v1/projects/${project.id}/feedbacks/${feedbackId}`, {
    bearer: project.account.adminToken,
    body,
  });
}

/** POST /projects/:id/feedbacks/:feedbackId/merge with the project's admin token. */
function merge(project: TestProject, sourceId: string, intoId: string) {
  return server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${sourceId}/merge`, {
    bearer: project.account.adminToken,
    body: { intoId },
  });
}

function getFeedback(project: TestProject, id: string, userId?: string) {
  return server.request('GET', `/api/v1/feedbacks/${id}`, {
    apiKey: project.apiKey,
    ...(userId === undefined ? {} : { userId }),
  });
}

function vote(project: TestProject, id: string, userId: string) {
  return server.request('POST', `/api/v1/feedbacks/${id}/votes`, { apiKey: project.apiKey, body: { userId } });
}

describe('PATCH /api/v1/projects/:id/feedbacks/:feedbackId', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('any of the six statuses may be set, from any status, and the Feedback is returned', async () => {
    const item = await createFeedback(server, project);
    // Forward through all six, then backwards: no transition is refused.
    for (const status of [...STATUSES, ...[...STATUSES].reverse()]) {
      const response = await patchFeedback(project, item.id, { status });
      expect(response.status, status).toBe(200);
      expect(response.body).toMatchObject({ id: item.id, title: item.title, status, vote_count: 1 });
      expect(response.body).toHaveProperty('merged_feedback_ids');
      const read = await getFeedback(project, item.id);
      expect(read.body.status).toBe(status);
    }
  });

  it.each(STATUSES)('sets status %s on a pending item', async (status) => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, { status });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: item.id, status, rejection_reason: null });
    expect(Date.parse(response.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(item.updated_at));
  });

  it('rejecting with a reason sets rejection_reason', async () => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, { status: 'rejected', rejectionReason: 'Out of scope' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'rejected', rejection_reason: 'Out of scope' });
    const read = await getFeedback(project, item.id);
    expect(read.body).toMatchObject({ status: 'rejected', rejection_reason: 'Out of scope' });
  });

  it('accepts the snake_case spelling rejection_reason', async () => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, { status: 'rejected', rejection_reason: 'Duplicate idea' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'rejected', rejection_reason: 'Duplicate idea' });
  });

  it('accepts a rejection reason of exactly 500 characters', async () => {
    const item = await createFeedback(server, project);
    const reason = 'r'.repeat(500);
    const response = await patchFeedback(project, item.id, { status: 'rejected', rejectionReason: reason });
    expect(response.status).toBe(200);
    expect(response.body.rejection_reason).toBe(reason);
  });

  it('400 naming rejectionReason for 501 characters, and nothing changes', async () => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, { status: 'rejected', rejectionReason: 'r'.repeat(501) });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringContaining('rejectionReason'),
      message: expect.stringContaining('rejectionReason'),
    });
    const read = await getFeedback(project, item.id);
    expect(read.body).toMatchObject({ status: 'pending', rejection_reason: null });
  });

  it.each(['pending', 'approved', 'in_progress', 'testflight', 'completed'])(
    '400 for a rejectionReason with status %s, and nothing changes',
    async (status) => {
      const item = await createFeedback(server, project);
      const response = await patchFeedback(project, item.id, { status, rejectionReason: 'nope' });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({
        error: true,
        reason: expect.stringContaining('rejectionReason'),
        message: expect.stringContaining('rejectionReason'),
      });
      const read = await getFeedback(project, item.id);
      expect(read.body).toMatchObject({ status: 'pending', rejection_reason: null });
    },
  );

  it('400 for a rejectionReason alone on an item that is not rejected', async () => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, { rejectionReason: 'nope' });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringContaining('rejectionReason'),
      message: expect.stringContaining('rejectionReason'),
    });
  });

  it('a rejected item may get its reason changed without restating the status', async () => {
    const item = await createFeedback(server, project);
    await patchFeedback(project, item.id, { status: 'rejected', rejectionReason: 'first' });
    const response = await patchFeedback(project, item.id, { rejectionReason: 'second' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'rejected', rejection_reason: 'second' });
  });

  it('moving away from rejected clears rejection_reason', async () => {
    const item = await createFeedback(server, project);
    await patchFeedback(project, item.id, { status: 'rejected', rejectionReason: 'Not now' });
    const response = await patchFeedback(project, item.id, { status: 'approved' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: 'approved', rejection_reason: null });
    const read = await getFeedback(project, item.id);
    expect(read.body.rejection_reason).toBeNull();
  });

  it('status changes govern voting: rejected and completed block it, approved reopens it', async () => {
    const item = await createFeedback(server, project);
    for (const status of ['rejected', 'completed'] as const) {
      await patchFeedback(project, item.id, { status });
      const blocked = await vote(project, item.id, `voter-${status}`);
      expect(blocked.status).toBe(403);
    }
    await patchFeedback(project, item.id, { status: 'approved' });
    const allowed = await vote(project, item.id, 'voter-approved');
    expect(allowed.status).toBe(200);
    expect(allowed.body.vote_count).toBe(2);
  });

  it.each([{ status: 'done' }, { status: 'Pending' }, { status: 3 }, {}])('400 for the invalid body %j', async (body) => {
    const item = await createFeedback(server, project);
    const response = await patchFeedback(project, item.id, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody);
    if ('status' in body) expect(response.body.reason).toContain('status');
  });

  it('404 for a feedback of another project, a missing id and a malformed id', async () => {
    const other = await createProject(server, { plan: 'pro' });
    const foreign = await createFeedback(server, other);
    for (const id of [foreign.id, MISSING_ID, 'not-a-uuid']) {
      const response = await patchFeedback(project, id, { status: 'completed' });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
    const untouched = await getFeedback(other, foreign.id);
    expect(untouched.body.status).toBe('pending');
  });
});

describe('GET /api/v1/projects/:id/feedbacks', () => {
  it('lists the project items for the admin, only this project, with the same filters', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const other = await createProject(server, { plan: 'pro' });
    const a = await createFeedback(server, project, { title: 'A' });
    const b = await createFeedback(server, project, { title: 'B', category: 'bug_report' });
    await createFeedback(server, other, { title: 'foreign' });
    await patchFeedback(project, b.id, { status: 'approved' });

    const all = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks?sort=oldest`, {
      bearer: project.account.adminToken,
    });
    expect(all.status).toBe(200);
    expect(all.body.map((f: any) => f.id)).toEqual([a.id, b.id]);
    expect(all.body[1]).toMatchObject({ title: 'B', status: 'approved', category: 'bug_report' });

    const approved = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks?status=approved`, {
      bearer: project.account.adminToken,
    });
    expect(approved.body.map((f: any) => f.id)).toEqual([b.id]);

    const bad = await server.request('GET', `/api/v1/projects/${project.id}/feedbacks?sort=best`, {
      bearer: project.account.adminToken,
    });
    expect(bad.status).toBe(400);
  });
});

describe('POST /api/v1/projects/:id/feedbacks/:feedbackId/merge', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createProject(server, { plan: 'pro' });
  });

  it('a merged item is read-only for the team: its status and a reply are 409, naming the target; the target takes both', async () => {
    const source = await createFeedback(server, project, { title: 'merged away' });
    const target = await createFeedback(server, project, { title: 'merged into' });
    expect((await merge(project, source.id, target.id)).status).toBe(200);
    const bearer = project.account.adminToken;
    const base = `/api/v1/projects/${project.id}/feedbacks`;

    const status = await server.request('PATCH', `${base}/${source.id}`, { bearer, body: { status: 'completed' } });
    expect(status.status).toBe(409);
    expect(status.body).toEqual({ error: true, reason: expect.stringContaining(target.id), message: expect.stringContaining(target.id) });
    const reply = await server.request('POST', `${base}/${source.id}/comments`, { bearer, body: { content: 'left behind?' } });
    expect(reply.status).toBe(409);
    expect(reply.body).toEqual({ error: true, reason: expect.stringContaining(target.id), message: expect.stringContaining(target.id) });
    const after = await getFeedback(project, source.id);
    expect(after.body).toMatchObject({ status: 'pending', comment_count: 0 });

    expect((await server.request('PATCH', `${base}/${target.id}`, { bearer, body: { status: 'completed' } })).status).toBe(200);
    expect((await server.request('POST', `${base}/${target.id}/comments`, { bearer, body: { content: 'here' } })).status).toBe(200);
  });

  it('marks the source merged into the target and the target lists the source', async () => {
    const source = await createFeedback(server, project, { title: 'source' });
    const target = await createFeedback(server, project, { title: 'target' });
    const before = Date.now();
    const response = await merge(project, source.id, target.id);
    expect(response.status).toBe(200);

    const mergedSource = await getFeedback(project, source.id);
    expect(mergedSource.status).toBe(200);
    expect(mergedSource.body.merged_into_id).toBe(target.id);
    expect(mergedSource.body.merged_at).toEqual(expect.any(String));
    expect(Date.parse(mergedSource.body.merged_at)).toBeGreaterThanOrEqual(before - 5_000);

    const mergedTarget = await getFeedback(project, target.id);
    expect(mergedTarget.body.merged_feedback_ids).toEqual([source.id]);
    expect(mergedTarget.body).toMatchObject({ merged_into_id: null, merged_at: null });
  });

  it('moves the source voters to the target, counting a user who voted on both once', async () => {
    const source = await createFeedback(server, project, { title: 'src', userId: 'creator-src' });
    const target = await createFeedback(server, project, { title: 'dst', userId: 'creator-dst' });
    for (const userId of ['both', 'only-src']) expect((await vote(project, source.id, userId)).status).toBe(200);
    expect((await vote(project, target.id, 'both')).status).toBe(200);
    // source: creator-src, both, only-src (3); target: creator-dst, both (2)

    expect((await merge(project, source.id, target.id)).status).toBe(200);

    const after = await getFeedback(project, target.id);
    // creator-dst, both, creator-src, only-src
    expect(after.body.vote_count).toBe(4);
    for (const userId of ['both', 'only-src', 'creator-src', 'creator-dst']) {
      const read = await getFeedback(project, target.id, userId);
      expect(read.body.has_voted, userId).toBe(true);
    }
    expect((await getFeedback(project, target.id, 'stranger')).body.has_voted).toBe(false);
    // The moved vote is a real vote on the target: voting again there is a 409.
    expect((await vote(project, target.id, 'only-src')).status).toBe(409);
    // ... and removing it counts down exactly.
    const removed = await server.request('DELETE', `/api/v1/feedbacks/${target.id}/votes`, {
      apiKey: project.apiKey,
      body: { userId: 'only-src' },
    });
    expect(removed.body).toMatchObject({ vote_count: 3, has_voted: false });
  });

  it("a user who voted on both keeps the opt-in to status emails of either vote, with that vote's email", async () => {
    const source = await createFeedback(server, project, { title: 'src opt-in' });
    const target = await createFeedback(server, project, { title: 'dst opt-in' });
    const voteWith = (id: string, body: Record<string, unknown>) =>
      server.request('POST', `/api/v1/feedbacks/${id}/votes`, { apiKey: project.apiKey, body });
    // opted in on the source only; on the target only; on neither
    expect((await voteWith(source.id, { userId: 'src-in', email: 'src-in@example.com', notifyStatusChange: true })).status).toBe(200);
    expect((await voteWith(target.id, { userId: 'src-in' })).status).toBe(200);
    expect((await voteWith(source.id, { userId: 'dst-in' })).status).toBe(200);
    expect((await voteWith(target.id, { userId: 'dst-in', email: 'dst-in@example.com', notifyStatusChange: true })).status).toBe(200);
    expect((await voteWith(source.id, { userId: 'none', email: 'none@example.com' })).status).toBe(200);
    expect((await voteWith(target.id, { userId: 'none' })).status).toBe(200);
    const [sourceToken] = await server.sql<{ unsubscribe_token: string }[]>`
      select unsubscribe_token from votes where feedback_id = ${source.id} and user_id = 'src-in'`;

    expect((await merge(project, source.id, target.id)).status).toBe(200);

    const rows = await server.sql<{ user_id: string; email: string | null; notify_status_change: boolean; unsubscribe_token: string }[]>`
      select user_id, email, notify_status_change, unsubscribe_token from votes
      where feedback_id = ${target.id} and user_id in ('src-in', 'dst-in', 'none') order by user_id`;
    expect(rows.map(({ unsubscribe_token: _, ...row }) => row)).toEqual([
      { user_id: 'dst-in', email: 'dst-in@example.com', notify_status_change: true },
      { user_id: 'none', email: 'none@example.com', notify_status_change: false },
      { user_id: 'src-in', email: 'src-in@example.com', notify_status_change: true },
    ]);
    // The unsubscribe link of the source's status emails still works.
    expect(rows.find((row) => row.user_id === 'src-in')?.unsubscribe_token).toBe(sourceToken?.unsubscribe_token);
    // creator of each item, src-in, dst-in, none: each once
    expect((await getFeedback(project, target.id)).body.vote_count).toBe(5);
  });

  it('carries the source comments to the target, prefixed "[Originally on: <title>]", in the order they were written', async () => {
    const source = await createFeedback(server, project, { title: 'Night theme' });
    const target = await createFeedback(server, project, { title: 'Dark theme' });
    const comment = (id: string, content: string, userId = 'talker') =>
      server.request('POST', `/api/v1/feedbacks/${id}/comments`, { apiKey: project.apiKey, body: { content, userId } });
    expect((await comment(target.id, 'first, on the target')).status).toBe(200);
    const carried = await comment(source.id, 'second, on the source', 'night-owl');
    expect(carried.status).toBe(200);
    expect((await comment(source.id, 'x'.repeat(2000))).status).toBe(200);
    const reply = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${source.id}/comments`, {
      bearer: project.account.adminToken,
      body: { content: 'team reply on the source' },
    });
    expect(reply.status).toBe(200);

    expect((await merge(project, source.id, target.id)).status).toBe(200);

    const thread = await server.request('GET', `/api/v1/feedbacks/${target.id}/comments`, { apiKey: project.apiKey });
    expect(thread.body.map((c: { content: string }) => c.content.slice(0, 60))).toEqual([
      'first, on the target',
      '[Originally on: Night theme] second, on the source',
      `[Originally on: Night theme] ${'x'.repeat(31)}`,
      '[Originally on: Night theme] team reply on the source',
    ]);
    // The rows moved: same id, author and time; an owner's reply stays the team's.
    expect(thread.body[1]).toMatchObject({ id: carried.body.id, user_id: 'night-owl', created_at: carried.body.created_at });
    expect(thread.body[3]).toMatchObject({ id: reply.body.id, is_admin: true });
    // Past the 2,000 characters a comment may have, the prefixed one is cut and says so.
    expect(thread.body[2].content).toHaveLength(2000);
    expect(thread.body[2].content.endsWith('…')).toBe(true);
    expect((await getFeedback(project, target.id)).body.comment_count).toBe(4);
    expect((await getFeedback(project, source.id)).body.comment_count).toBe(0);
    const left = await server.request('GET', `/api/v1/feedbacks/${source.id}/comments`, { apiKey: project.apiKey });
    expect(left.body).toEqual([]);

    // Merged again, the carried comments keep the prefix that names where they were written.
    const next = await createFeedback(server, project, { title: 'Theme support' });
    expect((await merge(project, target.id, next.id)).status).toBe(200);
    const final = await server.request('GET', `/api/v1/feedbacks/${next.id}/comments`, { apiKey: project.apiKey });
    expect(final.body.map((c: { content: string }) => c.content.slice(0, 60))).toEqual([
      '[Originally on: Dark theme] first, on the target',
      '[Originally on: Night theme] second, on the source',
      `[Originally on: Night theme] ${'x'.repeat(31)}`,
      '[Originally on: Night theme] team reply on the source',
    ]);
    expect((await getFeedback(project, next.id)).body.comment_count).toBe(4);
  });

  it('hides the source from GET /feedbacks by default and shows it with includeMerged=true', async () => {
    const own = await createProject(server, { plan: 'pro' });
    const source = await createFeedback(server, own, { title: 'source' });
    const target = await createFeedback(server, own, { title: 'target' });
    expect((await merge(own, source.id, target.id)).status).toBe(200);

    const byDefault = await server.request('GET', '/api/v1/feedbacks', { apiKey: own.apiKey });
    expect(byDefault.body.map((f: any) => f.id)).toEqual([target.id]);
    const explicitFalse = await server.request('GET', '/api/v1/feedbacks?includeMerged=false', { apiKey: own.apiKey });
    expect(explicitFalse.body.map((f: any) => f.id)).toEqual([target.id]);
    const included = await server.request('GET', '/api/v1/feedbacks?includeMerged=true', { apiKey: own.apiKey });
    expect(included.body.map((f: any) => f.id).sort()).toEqual([source.id, target.id].sort());
    const shown = included.body.find((f: any) => f.id === source.id);
    expect(shown.merged_into_id).toBe(target.id);
  });

  it('400 when merging an item into itself', async () => {
    const item = await createFeedback(server, project);
    const response = await merge(project, item.id, item.id);
    expect(response.status).toBe(400);
    expect(response.body).toEqual(errorBody);
    expect((await getFeedback(project, item.id)).body.merged_into_id).toBeNull();
  });

  it('400 or 409 when the target belongs to another project, and nothing changes', async () => {
    const other = await createProject(server, { plan: 'pro' });
    const foreignTarget = await createFeedback(server, other);
    const source = await createFeedback(server, project);
    const response = await merge(project, source.id, foreignTarget.id);
    expect([400, 409]).toContain(response.status);
    expect(response.body).toEqual(errorBody);
    expect((await getFeedback(project, source.id)).body).toMatchObject({ merged_into_id: null, vote_count: 1 });
    expect((await getFeedback(other, foreignTarget.id)).body).toMatchObject({ merged_feedback_ids: null, vote_count: 1 });
  });

  it('400 or 404 for a target id that does not exist or is not a UUID', async () => {
    const source = await createFeedback(server, project);
    for (const intoId of [MISSING_ID, 'not-a-uuid']) {
      const response = await merge(project, source.id, intoId);
      expect([400, 404]).toContain(response.status);
      expect(response.body).toEqual(errorBody);
    }
    const missingBody = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${source.id}/merge`, {
      bearer: project.account.adminToken,
      body: {},
    });
    expect(missingBody.status).toBe(400);
    expect(missingBody.body).toEqual({
      error: true,
      reason: expect.stringContaining('intoId'),
      message: expect.stringContaining('intoId'),
    });
  });

  it('accepts the snake_case spelling into_id', async () => {
    const source = await createFeedback(server, project);
    const target = await createFeedback(server, project);
    const response = await server.request('POST', `/api/v1/projects/${project.id}/feedbacks/${source.id}/merge`, {
      bearer: project.account.adminToken,
      body: { into_id: target.id },
    });
    expect(response.status).toBe(200);
    expect((await getFeedback(project, source.id)).body.merged_into_id).toBe(target.id);
  });

  it('404 for a source of another project or a malformed source id', async () => {
    const other = await createProject(server, { plan: 'pro' });
    const foreignSource = await createFeedback(server, other);
    const target = await createFeedback(server, project);
    for (const sourceId of [foreignSource.id, 'not-a-uuid', MISSING_ID]) {
      const response = await merge(project, sourceId, target.id);
      expect(response.status, sourceId).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
    expect((await getFeedback(other, foreignSource.id)).body.merged_into_id).toBeNull();
  });

  it('400 or 409 when the target is itself merged', async () => {
    const a = await createFeedback(server, project);
    const b = await createFeedback(server, project);
    const c = await createFeedback(server, project);
    expect((await merge(project, a.id, b.id)).status).toBe(200);
    const response = await merge(project, c.id, a.id);
    expect([400, 409]).toContain(response.status);
    expect(response.body).toEqual(errorBody);
    expect((await getFeedback(project, c.id)).body.merged_into_id).toBeNull();
    expect((await getFeedback(project, a.id)).body.merged_feedback_ids).toBeNull();
  });

  it('409 when the source is already merged', async () => {
    const a = await createFeedback(server, project);
    const b = await createFeedback(server, project);
    const c = await createFeedback(server, project);
    expect((await merge(project, a.id, b.id)).status).toBe(200);
    const again = await merge(project, a.id, c.id);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(errorBody);
    expect((await getFeedback(project, a.id)).body.merged_into_id).toBe(b.id);
    expect((await getFeedback(project, c.id)).body.merged_feedback_ids).toBeNull();
  });

  it('merging a merge target re-points its merged items: no chains, the final target lists both', async () => {
    const a = await createFeedback(server, project, { userId: 'ua' });
    const b = await createFeedback(server, project, { userId: 'ub' });
    const c = await createFeedback(server, project, { userId: 'uc' });
    expect((await merge(project, a.id, b.id)).status).toBe(200);
    expect((await merge(project, b.id, c.id)).status).toBe(200);

    expect((await getFeedback(project, a.id)).body.merged_into_id).toBe(c.id);
    expect((await getFeedback(project, b.id)).body.merged_into_id).toBe(c.id);
    const target = await getFeedback(project, c.id, 'ua');
    expect([...target.body.merged_feedback_ids].sort()).toEqual([a.id, b.id].sort());
    expect(target.body).toMatchObject({ vote_count: 3, has_voted: true, merged_into_id: null });
    expect((await getFeedback(project, b.id)).body.merged_feedback_ids).toBeNull();
  });

  it('voting on a merged source is refused and does not count anywhere', async () => {
    const source = await createFeedback(server, project);
    const target = await createFeedback(server, project);
    expect((await merge(project, source.id, target.id)).status).toBe(200);
    const response = await vote(project, source.id, 'late-voter');
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect((await getFeedback(project, target.id, 'late-voter')).body).toMatchObject({ vote_count: 2, has_voted: false });
  });
});
