import type { Server } from 'node:http';
import { buildApp } from '../api/app.js';
import { createClickhouseHandler, createClickhouseServer } from '../api/clickhouse/ch-interface.js';
import { withInterfaceLog } from '../api/clickhouse/ch-request-log.js';
import { createHttpServer } from '../api/http-server.js';
import type { Config } from '../core/config.js';
import { apiRunsWorkers } from '../core/config.js';
import { projectQueriesInEngine } from '../olap/readonly/readonly-lane.js';
import { startWorkers } from '../workers/runner.js';
import { endNow, migrateAll, onShutdownSignal } from './bootstrap.js';
import { resolveOperatorToken } from './operator-token.js';
import { createServices } from './services.js';
import { startTelemetryServer } from './telemetry-server.js';

/**
 * `npm start`: migrate, serve, and (with embedded ClickHouse or without Redis) run the workers
 * in this process. On SIGTERM/SIGINT: stop accepting, finish requests in flight, flush buffered
 * events, stop the workers, close every connection, exit 0.
 */
export async function run(config: Config): Promise<void> {
  const services = await createServices(config);
  const { logger } = services;
  await migrateAll(services);
  const operator = await resolveOperatorToken(config.operatorToken, config.dataDir);
  const workers = apiRunsWorkers(config) ? startWorkers(services) : undefined;

  const lifecycle = { stopping: false };
  const apiDeps = { ...services, operatorToken: operator.token, lifecycle };
  // One handler for /clickhouse and the interface's own port: one lane, one set of limits.
  const clickhouseInterface = withInterfaceLog(createClickhouseHandler(apiDeps, logger), logger, services.telemetry);
  const app = buildApp({ ...apiDeps, clickhouseInterface });
  const telemetryServer =
    config.telemetryPort > 0 ? await startTelemetryServer(services.telemetry.registry, config.telemetryPort, config.host) : undefined;
  const server: Server = createHttpServer(app, config.http, logger).listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const chServer =
    config.clickhouseInterface.port > 0
      ? createClickhouseServer(clickhouseInterface, config.http, logger).listen(config.clickhouseInterface.port, config.host)
      : undefined;
  if (chServer) {
    await new Promise<void>((resolve, reject) => {
      chServer.once('listening', resolve);
      chServer.once('error', reject);
    });
  }
  const chAddress = chServer?.address();
  const clickhousePort = typeof chAddress === 'object' && chAddress ? chAddress.port : undefined;
  logger.info({ host: config.host, port, clickhousePort, workers: workers !== undefined }, 'feedback service listening');
  if (operator.created) printFirstStartHelp(operator.token, port, config.dataDir);

  onShutdownSignal(
    services,
    async () => {
      lifecycle.stopping = true;
      const closed = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      const chClosed = chServer ? new Promise((resolve) => chServer.close(resolve)) : undefined;
      chServer?.closeIdleConnections();
      services.liveFeed.endStreams(); // live-view streams never go idle: end them (docs/insights.md)
      // Requests in flight get a few seconds to finish before their sockets are cut: a third of
      // the shutdown deadline, so that flushing and closing have the rest.
      const forceClose = setTimeout(
        () => {
          server.closeAllConnections();
          chServer?.closeAllConnections();
        },
        Math.min(10_000, config.shutdownTimeoutMs / 3),
      );
      forceClose.unref();
      await closed;
      await chClosed;
      await services.eventSink.close();
      await workers?.stop();
      await telemetryServer?.close();
      await services.close();
    },
    {
      deadlineMs: config.shutdownTimeoutMs,
      // A project query still in the engine (its request was cut, or given up on) would hold exit()
      // in the engine's destructors: measured, a SIGTERM during a minutes-long interface query
      // logged "stopped" and then never ended (test/api/service-stop.test.ts).
      exit: (code) => (projectQueriesInEngine(services.clickhouse) > 0 ? void endNow(logger) : process.exit(code)),
    },
  );
}

function printFirstStartHelp(operatorToken: string, port: number, dataDir: string) {
  const base = `http://127.0.0.1:${port}`;
  process.stdout.write(
    [
      '',
      `Operator token (stored in ${dataDir}/operator-token): ${operatorToken}`,
      'Create an account (its admin token creates projects and their API keys):',
      `  curl -s -X POST ${base}/api/v1/admin/accounts -H 'Authorization: Bearer ${operatorToken}' -H 'Content-Type: application/json' -d '{"email":"owner@example.com","plan":"free"}'`,
      `The owners' dashboard: ${base}/ (sign in with the account's admin_token)`,
      '',
    ].join('\n'),
  );
}
