import { describe, expect, it } from 'vitest';
import { findFreePort } from '../../src/core/net.js';
import { chRequest } from '../helpers/clickhouse-interface.js';
import { eventually } from '../helpers/eventually.js';
import { logLines, PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';
import { call, serviceSetup, startService, stopService } from '../helpers/service.js';

/*
 * An operator sees every request of the ClickHouse interface (docs/clickhouse-interface.md, "Seen by
 * an operator"): a real `npm start` process, its own interface port and the API port's /clickhouse,
 * one log line per request, never the query's literals or the password; Prometheus counts them.
 */

const LITERAL = 'a-literal-only-the-query-holds';

describe('the interface’s request log', () => {
  it(
    'logs one line per request on either port with credential, project, query id, kind, figures, status and code',
    async () => {
      const setup = await serviceSetup();
      const chPort = await findFreePort();
      const metricsPort = await findFreePort();
      setup.env.CLICKHOUSE_INTERFACE_PORT = String(chPort);
      setup.env.METRICS_PORT = String(metricsPort);
      const service = await startService(setup);
      const account = await call(setup.base, 'POST', '/api/v1/admin/accounts', {
        bearer: setup.operatorToken,
        body: { email: `log-${Date.now()}@example.com`, plan: 'pro' },
      });
      const own = await call(setup.base, 'POST', '/api/v1/projects', { bearer: account.body.admin_token, body: { name: 'logged' } });
      const made = await call(setup.base, 'POST', `/api/v1/projects/${own.body.id}/clickhouse-credentials`, {
        bearer: account.body.admin_token,
      });
      expect(made.status).toBe(201);
      const cred = { id: made.body.id, username: made.body.username, password: made.body.password };

      const viaPort = await chRequest(
        `http://127.0.0.1:${chPort}`,
        { query: `SELECT '${LITERAL}' AS s, number FROM numbers(3)`, query_id: 'q-port-1' },
        { auth: cred },
      );
      expect(viaPort.status, viaPort.text).toBe(200);
      const viaApi = await chRequest(`${setup.base}/clickhouse`, { query: 'SHOW TABLES', query_id: 'q-api-2' }, { auth: cred });
      expect(viaApi.status).toBe(200);
      const refused = await chRequest(
        `${setup.base}/clickhouse`,
        { query: `SELECT * FROM system.parts WHERE name = '${LITERAL}'`, query_id: 'q-api-3' },
        { auth: cred },
      );
      expect(refused.status).toBe(403);
      const badPassword = await chRequest(
        `http://127.0.0.1:${chPort}`,
        { query: 'SELECT 1', query_id: 'q-port-4' },
        { auth: { ...cred, password: 'wrong-password-xyz' } },
      );
      expect(badPassword.status).toBe(403);

      const lines = () => logLines(service.stdout).filter((line) => line.msg === 'clickhouse interface request');
      await eventually('the four lines', 30_000, async () => lines().length >= 4);
      const byId = new Map(lines().map((line) => [line.queryId, line]));
      expect(byId.get('q-port-1')).toMatchObject({
        port: chPort,
        credentialId: cred.id,
        projectId: own.body.id,
        kind: 'select',
        outcome: 'ok',
        status: 200,
        resultRows: 3,
        resultBytes: expect.any(Number),
        readRows: expect.any(Number),
        readBytes: expect.any(Number),
        durationMs: expect.any(Number),
      });
      expect(byId.get('q-port-1')?.errorCode).toBeUndefined();
      expect(byId.get('q-api-2')).toMatchObject({ kind: 'show', status: 200, resultRows: 4, credentialId: cred.id });
      expect(byId.get('q-api-2')?.port).not.toBe(chPort);
      expect(byId.get('q-api-3')).toMatchObject({
        kind: 'refused',
        outcome: 'refused',
        status: 403,
        errorCode: 497,
        credentialId: cred.id,
      });
      expect(byId.get('q-port-4')).toMatchObject({ kind: 'refused', outcome: 'refused', status: 403, errorCode: 516 });
      expect(byId.get('q-port-4')?.credentialId).toBeUndefined();
      expect(typeof lines()[0]?.time).toBe('number');
      for (const secret of [LITERAL, cred.password, 'wrong-password-xyz']) expect(service.stdout).not.toContain(secret);

      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(metrics).toMatch(/feedback_clickhouse_interface_requests_total\{outcome="ok",kind="select"\} 1/);
      expect(metrics).toMatch(/feedback_clickhouse_interface_requests_total\{outcome="refused",kind="refused"\} 2/);
      expect(metrics).toMatch(/feedback_clickhouse_interface_request_duration_seconds_count\{outcome="ok"\} 2/);
      await stopService(service);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
