import { describe, expect, it } from 'vitest';
import { expectError } from '../helpers/expect.js';
import { createProject } from '../helpers/factories.js';
import { useTestServer } from '../helpers/server.js';
import { startGithubStandin } from '../helpers/trackers.js';

/*
 * A tracker integration's api_url passes the SSRF guard of webhooks (docs/integrations.md): a
 * loopback, private or reserved address works only with ALLOW_PRIVATE_WEBHOOKS=true, which this
 * server does not set (test/api/trackers.test.ts runs with it, against its stand-ins).
 */

const guarded = useTestServer();

describe('the api_url and the SSRF guard', () => {
  it('refuses a loopback or private api_url without ALLOW_PRIVATE_WEBHOOKS: 400 on creation and on discovery', async () => {
    const project = await createProject(guarded, { plan: 'pro' });
    for (const api_url of ['http://127.0.0.1:9', 'http://10.0.0.8/api/v3', 'http://[::1]:8080']) {
      const created = await guarded.request('POST', `/api/v1/projects/${project.id}/integrations`, {
        bearer: project.account.adminToken,
        body: { kind: 'github', token: 'github_pat_0123456789', repository: 'acme/app', api_url },
      });
      expectError(created, 400, 'apiUrl: refused');
      const discovery = await guarded.request('POST', `/api/v1/projects/${project.id}/trackers/linear/teams`, {
        bearer: project.account.adminToken,
        body: { token: 'lin_api_0123456789', api_url },
      });
      expectError(discovery, 400, 'apiUrl: refused');
    }
  });

  it('refuses a name that resolves to loopback at the call, with nothing sent', async () => {
    const github = await startGithubStandin();
    const project = await createProject(guarded, { plan: 'pro' });
    const port = new URL(github.url).port;
    const response = await guarded.request('POST', `/api/v1/projects/${project.id}/trackers/github/repositories`, {
      bearer: project.account.adminToken,
      body: { token: github.token, api_url: `http://localhost:${port}` },
    });
    expectError(response, 400, 'resolves to');
    expect(github.calls).toEqual([]);
  });
});
