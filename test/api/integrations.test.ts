import { describe, expect, it } from 'vitest';
import { errorBody, MISSING_ID } from '../helpers/expect.js';
import { addIntegration, addMember, createAccount, createProject, setPlan, setSuspended, type TestProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';

/*
 * Integrations (SPEC 8.2: Pro and Team): Slack and Discord incoming webhooks and signed generic
 * webhooks. A webhook's secret is shown only when the server generated it, once.
 */

const server = useTestServer();

const SLACK_URL = 'https://hooks.slack.com/services/T000/B000/XXXX';
const DISCORD_URL = 'https://discord.com/api/webhooks/123/abc';
const WEBHOOK_URL = 'https://example.com/hooks/feedback';
const OWN_SECRET = 'my-own-signing-secret-0123456789';

const path = (project: { id: string }, id?: string) => `/api/v1/projects/${project.id}/integrations${id === undefined ? '' : `/${id}`}`;

function post(project: TestProject, body: unknown, bearer = project.account.adminToken) {
  return server.request('POST', path(project), { bearer, body });
}
function list(project: TestProject, bearer = project.account.adminToken) {
  return server.request('GET', path(project), { bearer });
}
function patch(project: TestProject, id: string, body: unknown, bearer = project.account.adminToken) {
  return server.request('PATCH', path(project, id), { bearer, body });
}
function remove(project: TestProject, id: string, bearer = project.account.adminToken) {
  return server.request('DELETE', path(project, id), { bearer });
}

async function storedSecret(id: string): Promise<string | null | undefined> {
  const [row] = await server.sql<{ secret: string | null }[]>`select secret from integrations where id = ${id}`;
  return row?.secret;
}

describe('POST /api/v1/projects/:id/integrations', () => {
  it.each(['pro', 'team'] as const)('adds a Slack integration on the %s plan, for every notification type by default', async (plan) => {
    const project = await createProject(server, { plan });
    const response = await post(project, { kind: 'slack', url: SLACK_URL });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project_id: project.id,
      kind: 'slack',
      url: SLACK_URL,
      events: null,
      enabled: true,
      has_secret: false,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('adds a Discord integration with a subset of types, disabled', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const response = await post(project, { kind: 'discord', url: DISCORD_URL, events: ['feedback.status_changed'], enabled: false });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ kind: 'discord', events: ['feedback.status_changed'], enabled: false, has_secret: false });
    expect(response.body).not.toHaveProperty('secret');
  });

  it('events: null is the same as omitted (all types)', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const response = await post(project, { kind: 'slack', url: SLACK_URL, events: null });
    expect(response.status).toBe(200);
    expect(response.body.events).toBeNull();
  });

  it('generates a webhook’s secret when none is given, returns it once and stores it', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const response = await post(project, { kind: 'webhook', url: WEBHOOK_URL });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ kind: 'webhook', has_secret: true, secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/) });
    expect(await storedSecret(response.body.id)).toBe(response.body.secret);
    // Each webhook gets its own.
    const second = await post(project, { kind: 'webhook', url: WEBHOOK_URL });
    expect(second.body.secret).not.toBe(response.body.secret);
    // Never shown again.
    const listed = await list(project);
    for (const integration of listed.body) {
      expect(integration).not.toHaveProperty('secret');
      expect(integration.has_secret).toBe(true);
    }
    expect(JSON.stringify(listed.body)).not.toContain(response.body.secret);
  });

  it('keeps a webhook secret given by the owner and never returns it', async () => {
    const project = await createProject(server, { plan: 'team' });
    const response = await post(project, { kind: 'webhook', url: WEBHOOK_URL, secret: OWN_SECRET });
    expect(response.status).toBe(200);
    expect(response.body).not.toHaveProperty('secret');
    expect(response.body.has_secret).toBe(true);
    expect(JSON.stringify(response.body)).not.toContain(OWN_SECRET);
    expect(await storedSecret(response.body.id)).toBe(OWN_SECRET);
  });

  it('accepts secrets of 16 and of 256 characters', async () => {
    const project = await createProject(server, { plan: 'pro' });
    for (const secret of ['s'.repeat(16), 's'.repeat(256)]) {
      const response = await post(project, { kind: 'webhook', url: WEBHOOK_URL, secret });
      expect(response.status, `${secret.length}`).toBe(200);
      expect(await storedSecret(response.body.id)).toBe(secret);
    }
  });

  it('accepts http and https URLs up to 2048 characters, trimmed', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const long = `https://example.com/${'a'.repeat(2048 - 'https://example.com/'.length)}`;
    expect(long).toHaveLength(2048);
    for (const [url, stored] of [
      [long, long],
      ['http://127.0.0.1:8080/hook', 'http://127.0.0.1:8080/hook'],
      ['  https://example.com/x  ', 'https://example.com/x'],
    ] as const) {
      const response = await post(project, { kind: 'webhook', url });
      expect(response.status, url).toBe(200);
      expect(response.body.url).toBe(stored);
    }
  });

  it.each([
    ['ftp URL', { url: 'ftp://example.com/hook' }, 'url'],
    ['javascript: URL', { url: 'javascript:alert(1)' }, 'url'],
    ['file URL', { url: 'file:///etc/passwd' }, 'url'],
    ['relative URL', { url: '/hooks/feedback' }, 'url'],
    ['URL without scheme', { url: 'hooks.slack.com/services/x' }, 'url'],
    ['http: without //', { url: 'http:example.com' }, 'url'],
    ['URL over 2048 characters', { url: `https://example.com/${'a'.repeat(2030)}` }, 'url'],
    ['empty URL', { url: '' }, 'url'],
    ['URL not a string', { url: 42 }, 'url'],
    ['missing URL', { url: undefined }, 'url'],
    ['unknown kind', { kind: 'email' }, 'kind'],
    ['missing kind', { kind: undefined }, 'kind'],
    ['empty events', { events: [] }, 'events'],
    ['unknown event', { events: ['feedback.deleted'] }, 'events'],
    ['repeated event', { events: ['feedback.created', 'feedback.created'] }, 'events'],
    ['events as a string', { events: 'feedback.created' }, 'events'],
    ['enabled not a boolean', { enabled: 'yes' }, 'enabled'],
    ['secret of 15 characters', { kind: 'webhook', secret: 's'.repeat(15) }, 'secret'],
    ['secret of 257 characters', { kind: 'webhook', secret: 's'.repeat(257) }, 'secret'],
    ['secret not a string', { kind: 'webhook', secret: 1234567890123456 }, 'secret'],
    ['secret for slack', { kind: 'slack', secret: OWN_SECRET }, 'secret'],
    ['secret for discord', { kind: 'discord', url: DISCORD_URL, secret: OWN_SECRET }, 'secret'],
  ])('400 naming the field for a %s, and nothing is stored', async (_label, override, field) => {
    const project = await createProject(server, { plan: 'pro' });
    const response = await post(project, { kind: 'slack', url: SLACK_URL, ...override });
    expect(response.status).toBe(400);
    expect(response.body).toEqual({
      error: true,
      reason: expect.stringMatching(new RegExp(`^(events\\.\\d+|${field}): `)),
      message: expect.stringMatching(new RegExp(`^(events\\.\\d+|${field}): `)),
    });
    expect((await list(project)).body).toEqual([]);
  });

  it('402 with the SPEC error body on the Free plan, before the body is read', async () => {
    const project = await createProject(server, { plan: 'free' });
    for (const body of [
      { kind: 'slack', url: SLACK_URL },
      { kind: 'webhook', url: 'ftp://nope' },
    ]) {
      const response = await post(project, body);
      expect(response.status).toBe(402);
      expect(response.body).toEqual({
        error: true,
        reason: 'integrations require the Pro or Team plan',
        message: 'integrations require the Pro or Team plan',
      });
    }
    expect((await list(project)).body).toEqual([]);
  });

  it('401 without a token; 403 on another account’s project; 404 on an unknown project', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const bare = await server.request('POST', path(project), { body: { kind: 'slack', url: SLACK_URL } });
    expect(bare.status).toBe(401);
    expect(bare.body).toEqual(errorBody);
    const stranger = await createAccount(server, 'team');
    const foreign = await post(project, { kind: 'slack', url: SLACK_URL }, stranger.adminToken);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual(errorBody);
    for (const id of [MISSING_ID, 'not-a-uuid']) {
      const missing = await server.request('POST', `/api/v1/projects/${id}/integrations`, {
        bearer: project.account.adminToken,
        body: { kind: 'slack', url: SLACK_URL },
      });
      expect(missing.status, id).toBe(404);
    }
    expect((await list(project)).body).toEqual([]);
  });
});

describe('GET /api/v1/projects/:id/integrations', () => {
  it('lists the project’s integrations oldest first, without secrets', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const slack = await addIntegration(server, project);
    const webhook = await addIntegration(server, project, { kind: 'webhook', url: WEBHOOK_URL, events: ['feedback.created'] });
    await addIntegration(server, other);
    const response = await list(project);
    expect(response.status).toBe(200);
    const { secret: _secret, ...webhookWithoutSecret } = webhook;
    expect(response.body).toEqual([slack, webhookWithoutSecret]);
  });

  it('answers an empty list on the Free plan', async () => {
    const project = await createProject(server, { plan: 'free' });
    const response = await list(project);
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('403 on another account’s project and on a suspended project', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const stranger = await createAccount(server, 'pro');
    expect((await list(project, stranger.adminToken)).status).toBe(403);
    await setSuspended(server, project, true);
    try {
      const response = await list(project);
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: true, reason: 'project is suspended', message: 'project is suspended' });
    } finally {
      await setSuspended(server, project, false);
    }
  });
});

describe('GET /api/v1/projects/:id/integrations/:integrationId', () => {
  it('answers one integration without its secret', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = (await post(project, { kind: 'webhook', url: WEBHOOK_URL, secret: OWN_SECRET })).body;
    const response = await server.request('GET', path(project, created.id), { bearer: project.account.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ ...created, has_secret: true });
    expect(response.body).not.toHaveProperty('secret');
  });

  it('404 for an unknown or malformed id and for an integration of another project; 403 for another account', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const other = await createProject(server, { plan: 'pro', account: project.account });
    const foreign = (await post(other, { kind: 'slack', url: SLACK_URL })).body;
    for (const id of [MISSING_ID, 'not-a-uuid', foreign.id]) {
      const response = await server.request('GET', path(project, id), { bearer: project.account.adminToken });
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ ...errorBody, reason: 'integration not found' });
    }
    const stranger = await createAccount(server);
    const refused = await server.request('GET', path(project, foreign.id), { bearer: stranger.adminToken });
    expect(refused.status).toBe(403);
  });
});

describe('PATCH /api/v1/projects/:id/integrations/:integrationId', () => {
  it('changes only the fields sent and advances updated_at', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await addIntegration(server, project, { kind: 'slack', url: SLACK_URL, events: ['feedback.created'] });

    const disabled = await patch(project, created.id, { enabled: false });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({ ...created, enabled: false, updated_at: expect.any(String) });
    // The answer has whole seconds (RFC 3339, as the origin sent); the stored time shows the advance.
    expect(Date.parse(disabled.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    const [stored] = await server.sql<{ advanced: boolean }[]>`
      select updated_at > created_at as advanced from integrations where id = ${created.id}`;
    expect(stored?.advanced).toBe(true);

    const moved = await patch(project, created.id, { url: `${SLACK_URL}/new` });
    expect(moved.body).toMatchObject({ url: `${SLACK_URL}/new`, enabled: false, events: ['feedback.created'], kind: 'slack' });

    const both = await patch(project, created.id, { events: ['feedback.status_changed', 'feedback.created'], enabled: true });
    expect(both.body).toMatchObject({ events: ['feedback.status_changed', 'feedback.created'], enabled: true, url: `${SLACK_URL}/new` });

    const all = await patch(project, created.id, { events: null });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ events: null, enabled: true, url: `${SLACK_URL}/new` });

    expect((await list(project)).body).toEqual([all.body]);
  });

  it('replaces a webhook’s secret without returning it', async () => {
    const project = await createProject(server, { plan: 'team' });
    const created = await addIntegration(server, project, { kind: 'webhook', url: WEBHOOK_URL });
    const response = await patch(project, created.id, { secret: OWN_SECRET });
    expect(response.status).toBe(200);
    expect(response.body).not.toHaveProperty('secret');
    expect(response.body.has_secret).toBe(true);
    expect(await storedSecret(created.id)).toBe(OWN_SECRET);
    // Changing another field keeps the secret.
    await patch(project, created.id, { enabled: false });
    expect(await storedSecret(created.id)).toBe(OWN_SECRET);
  });

  it.each([
    ['an empty body', {}, /^url, secret, events or enabled is required \(for a tracker: /],
    ['kind', { kind: 'discord' }, /^kind: /],
    ['kind with other fields', { kind: 'webhook', enabled: false }, /^kind: /],
    ['an ftp URL', { url: 'ftp://example.com' }, /^url: /],
    ['a javascript: URL', { url: 'javascript:alert(1)' }, /^url: /],
    ['a relative URL', { url: 'hook' }, /^url: /],
    ['a URL over 2048 characters', { url: `https://example.com/${'a'.repeat(2030)}` }, /^url: /],
    ['a null URL', { url: null }, /^url: /],
    ['empty events', { events: [] }, /^events: /],
    ['repeated events', { events: ['feedback.created', 'feedback.created'] }, /^events: /],
    ['an unknown event', { events: ['vote.added'] }, /^events\.0: /],
    ['enabled null', { enabled: null }, /^enabled: /],
    ['a secret for slack', { secret: OWN_SECRET }, /^secret: /],
    ['a short secret', { secret: 'short' }, /^secret: /],
    ['a null secret', { secret: null }, /^secret: /],
  ])('400 for %s, and nothing changes', async (_label, body, reason) => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await addIntegration(server, project);
    const response = await patch(project, created.id, body);
    expect(response.status).toBe(400);
    expect(response.body).toEqual({ error: true, reason: expect.stringMatching(reason), message: expect.stringMatching(reason) });
    expect((await list(project)).body).toEqual([created]);
  });

  it('404 for an unknown or malformed id, and for an integration of another project', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const elsewhere = await addIntegration(server, other);
    for (const id of [MISSING_ID, 'not-a-uuid', elsewhere.id]) {
      const response = await patch(project, id, { enabled: false });
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual({ error: true, reason: 'integration not found', message: 'integration not found' });
    }
    expect((await list(other)).body).toEqual([elsewhere]);
  });

  it('403 on another account’s project', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await addIntegration(server, project);
    const stranger = await createAccount(server, 'team');
    const response = await patch(project, created.id, { enabled: false }, stranger.adminToken);
    expect(response.status).toBe(403);
    expect((await list(project)).body).toEqual([created]);
  });
});

describe('DELETE /api/v1/projects/:id/integrations/:integrationId', () => {
  it('removes the integration and answers it without its secret', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await addIntegration(server, project, { kind: 'webhook', url: WEBHOOK_URL });
    const kept = await addIntegration(server, project);
    const response = await remove(project, created.id);
    expect(response.status).toBe(200);
    const { secret: _secret, ...withoutSecret } = created;
    expect(response.body).toEqual(withoutSecret);
    expect((await list(project)).body).toEqual([kept]);
    expect(await storedSecret(created.id)).toBeUndefined();
    expect((await remove(project, created.id)).status).toBe(404);
  });

  it('404 for an unknown or malformed id, or another project’s integration; 403 for another account', async () => {
    const account = await createAccount(server, 'pro');
    const project = await createProject(server, { account });
    const other = await createProject(server, { account });
    const elsewhere = await addIntegration(server, other);
    for (const id of [MISSING_ID, 'not-a-uuid', elsewhere.id]) {
      const response = await remove(project, id);
      expect(response.status, id).toBe(404);
      expect(response.body).toEqual(errorBody);
    }
    const stranger = await createAccount(server, 'pro');
    expect((await remove(other, elsewhere.id, stranger.adminToken)).status).toBe(403);
    expect((await list(other)).body).toEqual([elsewhere]);
  });
});

describe('plans, suspension and archiving', () => {
  it('after a downgrade to Free: kept and listed, not created or changed, still removable; back on Pro it can be changed again', async () => {
    const account = await createAccount(server, 'pro');
    const project = await createProject(server, { account });
    const slack = await addIntegration(server, project);
    const webhook = await addIntegration(server, project, { kind: 'webhook', url: WEBHOOK_URL });
    await setPlan(server, account, 'free');

    const listed = await list(project);
    expect(listed.status).toBe(200);
    expect(listed.body.map((i: { id: string }) => i.id)).toEqual([slack.id, webhook.id]);
    for (const response of [await post(project, { kind: 'slack', url: SLACK_URL }), await patch(project, slack.id, { enabled: false })]) {
      expect(response.status).toBe(402);
      expect(response.body).toEqual({
        error: true,
        reason: 'integrations require the Pro or Team plan',
        message: 'integrations require the Pro or Team plan',
      });
    }
    expect((await remove(project, webhook.id)).status).toBe(200);

    await setPlan(server, account, 'pro');
    expect((await patch(project, slack.id, { enabled: false })).status).toBe(200);
  });

  it('a downgrade from Team to Pro changes nothing for integrations', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const created = await addIntegration(server, project);
    await setPlan(server, account, 'pro');
    expect((await patch(project, created.id, { enabled: false })).status).toBe(200);
    expect((await post(project, { kind: 'discord', url: DISCORD_URL })).status).toBe(200);
  });

  it('403 on every route of a suspended project; an archived project is allowed', async () => {
    const project = await createProject(server, { plan: 'pro' });
    const created = await addIntegration(server, project);
    await setSuspended(server, project, true);
    try {
      for (const response of [
        await post(project, { kind: 'slack', url: SLACK_URL }),
        await list(project),
        await patch(project, created.id, { enabled: false }),
        await remove(project, created.id),
      ]) {
        expect(response.status).toBe(403);
        expect(response.body).toEqual({ error: true, reason: 'project is suspended', message: 'project is suspended' });
      }
    } finally {
      await setSuspended(server, project, false);
    }
    const archive = await server.request('PATCH', `/api/v1/projects/${project.id}`, {
      bearer: project.account.adminToken,
      body: { archived: true },
    });
    expect(archive.status).toBe(200);
    expect((await post(project, { kind: 'discord', url: DISCORD_URL })).status).toBe(200);
    expect((await patch(project, created.id, { enabled: false })).status).toBe(200);
    expect((await remove(project, created.id)).status).toBe(200);
  });

  it('a team member’s token manages the account’s integrations', async () => {
    const account = await createAccount(server, 'team');
    const project = await createProject(server, { account });
    const member = await addMember(server, project);
    const created = await post(project, { kind: 'slack', url: SLACK_URL }, member.adminToken);
    expect(created.status).toBe(200);
    expect((await patch(project, created.body.id, { enabled: false }, member.adminToken)).status).toBe(200);
    expect((await list(project, member.adminToken)).body).toHaveLength(1);
  });
});
