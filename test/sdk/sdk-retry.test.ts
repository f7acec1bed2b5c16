import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { FeedbackApiError, FeedbackNetworkError } from '../../sdk/dist/node.js';
import { eventually, sleep } from '../helpers/eventually.js';
import { createProject, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { recordingFetch, sdkClient } from './sdk-client.js';
import { switchableProxy } from './switchable-proxy.js';

/*
 * The SDK's retry rules and its queue's bound against the real service: a 429 waits out its
 * Retry-After however short the backoff, a refusal no retry can fix drops the batch once, the
 * queue keeps the newest events past its cap and counts the rest, and the feedback calls of
 * SPEC part 4 answer typed errors in the SPEC 7.1 shape.
 */

const server = useTestServer({ env: { RATE_LIMIT_INGEST: '2/s' } });
let project: TestProject;

beforeAll(async () => {
  // Two batch requests a second per key: the third in a second gets a real 429 with Retry-After.
  project = await createProject(server, { plan: 'pro' });
});

it('a 429 is retried no sooner than its Retry-After, even with a backoff of a millisecond', async () => {
  const { fetch, sent } = recordingFetch();
  const client = sdkClient(server.url, project.apiKey, { fetch, flushAt: 1000, maxBatchSize: 5, retryBaseMs: 1, retryMaxMs: 1 });
  const ids = Array.from({ length: 25 }, (_, i) => client.track('sdk_429', { i }, { userId: 'limited' }));
  client.flush().catch(() => undefined);
  await eventually('every batch delivered', 20_000, async () => client.stats().queued === 0);
  const limited = sent.flatMap((request, i) => (request.status === 429 ? [i] : []));
  expect(limited.length, 'the limit was hit').toBeGreaterThan(0);
  for (const i of limited) {
    const waited = (sent[i + 1]?.at ?? Number.POSITIVE_INFINITY) - (sent[i]?.at ?? 0);
    // Retry-After is whole seconds (at least 1); the request's own time is inside the gap.
    expect(waited, `the retry after request ${i}`).toBeGreaterThanOrEqual(900);
  }
  expect(client.stats()).toMatchObject({ delivered: 25, queued: 0 });
  await server.eventsVisible();
  const rows = await server.clickhouseRows('SELECT event_id FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}', {
    p: project.id,
    ids,
  });
  expect(rows).toHaveLength(25);
  await client.shutdown();
});

it('a wrong API key: the batch is dropped and reported once, never retried', async () => {
  const { fetch, sent } = recordingFetch();
  const errors: unknown[] = [];
  const client = sdkClient(server.url, 'fbk_not_a_key', { fetch, flushAt: 1000, retryBaseMs: 1, onError: (error) => errors.push(error) });
  client.track('sdk_401', {}, { userId: 'nobody' });
  await client.flush();
  // Fixed on purpose: time in which a wrong SDK would retry (retryBaseMs is 1).
  await sleep(100);
  expect(sent.map((request) => request.status)).toEqual([401]);
  expect(errors).toHaveLength(1);
  // A drop: reported as such (sdk-no-loss.test.ts), the service's refusal as its cause.
  expect(errors[0]).toMatchObject({ name: 'FeedbackDropError', code: 'REFUSED', count: 1 });
  expect((errors[0] as { cause?: unknown }).cause).toBeInstanceOf(FeedbackApiError);
  expect((errors[0] as { cause?: unknown }).cause).toMatchObject({ status: 401, reason: expect.any(String) });
  expect(client.stats()).toMatchObject({ discarded: 1, queued: 0 });
});

it('the queue is bounded: past maxQueueSize the oldest are dropped and counted, the newest delivered in order', async () => {
  const proxy = await switchableProxy(Number(new URL(server.url).port));
  await proxy.down();
  const client = sdkClient(proxy.url, project.apiKey, { flushAt: 1000, maxQueueSize: 10, retryBaseMs: 50, retryMaxMs: 200 });
  const ids = Array.from({ length: 15 }, (_, i) => client.track('sdk_bounded', { i }, { userId: `bounded-${randomUUID()}` }));
  // UUIDv7 eventIds, given at track time, sort in tracking order.
  expect(ids.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id))).toBe(true);
  expect([...ids].sort()).toEqual(ids);
  await expect(client.flush()).rejects.toBeInstanceOf(FeedbackNetworkError);
  expect(client.stats()).toMatchObject({ queued: 10, dropped: 5 });
  await proxy.up();
  await eventually('the queue delivered', 10_000, async () => client.stats().queued === 0);
  await server.eventsVisible();
  const rows = await server.clickhouseRows<{ id: string }>(
    'SELECT toString(event_id) AS id FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}',
    { p: project.id, ids },
  );
  expect(rows.map((row) => row.id).sort()).toEqual(ids.slice(5));
  await client.shutdown();
  await proxy.close();
});

it('the feedback calls of SPEC part 4, and their errors typed from SPEC 7.1', async () => {
  const client = sdkClient(server.url, project.apiKey);
  const user = await client.identify('fan-1', { mrr: 49.5 });
  expect(user).toMatchObject({ user_id: 'fan-1', mrr: 49.5 });
  const created = await client.createFeedback({ title: 'Dark mode', description: 'Please', category: 'feature_request' });
  expect(created).toMatchObject({ user_id: 'fan-1', vote_count: 1, status: 'pending' });
  const second = await client.createFeedback({ title: 'Export', description: 'CSV', category: 'improvement', userId: 'fan-2' });
  expect(await client.vote(second.id)).toMatchObject({ feedback_id: second.id, vote_count: 2, has_voted: true });
  const conflict = await client.vote(second.id).catch((error: unknown) => error);
  expect(conflict).toBeInstanceOf(FeedbackApiError);
  expect(conflict).toMatchObject({
    status: 409,
    code: undefined,
    body: { error: true, reason: expect.any(String), message: expect.any(String) },
  });
  const byVotes = await client.listFeedback({ sort: 'votes' });
  expect(byVotes.map((item) => item.id)).toEqual([second.id, created.id]);
  expect(byVotes[0]?.has_voted).toBe(true);
  expect((await client.listFeedback({ category: 'improvement' })).map((item) => item.id)).toEqual([second.id]);
  expect((await client.listFeedback({ status: 'completed', includeMerged: true })).length).toBe(0);
  expect(await client.unvote(second.id)).toMatchObject({ vote_count: 1, has_voted: false });
  expect((await client.getFeedback(second.id)).has_voted).toBe(false);
  const comment = await client.addComment(second.id, { content: 'Yes please' });
  expect(comment).toMatchObject({ content: 'Yes please', user_id: 'fan-1', is_admin: false });
  expect(await client.listComments(second.id)).toEqual([comment]);
  const missing = await client.getFeedback(randomUUID()).catch((error: unknown) => error);
  expect(missing).toMatchObject({ name: 'FeedbackApiError', status: 404 });
  const invalid = await client.createFeedback({ title: '', description: 'x', category: 'other' }).catch((error: unknown) => error);
  expect(invalid).toMatchObject({ status: 400, reason: expect.stringMatching(/title/) });
});

it('an answer lost on the way back: the retry is answered duplicate, and each event is stored once', async () => {
  const proxy = await switchableProxy(Number(new URL(server.url).port));
  const { fetch, sent } = recordingFetch();
  // A long request timeout: beside a test file that writes gigabytes, the service's fsync'd
  // answer took over 10 s in CI, the SDK gave up first, and no answer was ever cut.
  const client = sdkClient(proxy.url, project.apiKey, { fetch, flushAt: 1000, retryBaseMs: 200, retryMaxMs: 200, timeoutMs: 60_000 });
  // The first 200 is lost after the service stored the batch; a 429 (when an earlier test of this
  // file left the key's budget spent) passes and is waited out like any other.
  proxy.cutAnswers(200);
  const ids = Array.from({ length: 8 }, (_, i) => client.track('sdk_lost_answer', { i }, { userId: 'lost' }));
  await client.flush().catch(() => undefined);
  await eventually('an answer lost', 60_000, async () => proxy.cuts === 1).catch((error: Error) => {
    // What the SDK sent and got, to tell a slow service from answers that were not cut.
    throw new Error(`${error.message}; sent: ${JSON.stringify(sent.map((request) => [request.at, request.status]))}; cuts ${proxy.cuts}`);
  });
  proxy.cutAnswers(undefined);
  await eventually('the retry answered', 60_000, async () => client.stats().queued === 0);
  const statuses = sent.map((request) => request.status).filter((status) => status !== 429);
  expect(statuses).toEqual([undefined, 200]);
  const stats = client.stats();
  expect(stats).toMatchObject({ queued: 0, duplicates: 8, delivered: 0 });
  await server.eventsVisible();
  const rows = await server.clickhouseRows('SELECT event_id FROM events WHERE project_id = {p:UUID} AND event_id IN {ids:Array(UUID)}', {
    p: project.id,
    ids,
  });
  expect(rows).toHaveLength(8);
  await client.shutdown();
  await proxy.close();
}, 150_000);
