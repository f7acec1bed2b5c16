import type { Config } from '../core/config.js';
import { apiRunsWorkers } from '../core/config.js';
import { startWorkers } from '../workers/runner.js';
import { migrateAll, onShutdownSignal } from './bootstrap.js';
import { createServices } from './services.js';
import { startTelemetryServer } from './telemetry-server.js';

/**
 * `npm run worker`: the queue consumer and outbox relay as a process of their own, for
 * deployments with a ClickHouse server and Redis. With embedded ClickHouse the data directory
 * belongs to the API process, which runs the workers itself.
 */
export async function run(config: Config): Promise<void> {
  if (apiRunsWorkers(config)) {
    process.stderr.write(
      'npm run worker needs CLICKHOUSE_URL and REDIS_URL; with embedded ClickHouse or without Redis, npm start runs the workers\n',
    );
    process.exit(1);
  }
  const services = await createServices(config);
  await migrateAll(services);
  const workers = startWorkers(services);
  const telemetryServer =
    config.telemetryPort > 0 ? await startTelemetryServer(services.telemetry.registry, config.telemetryPort, config.host) : undefined;
  services.logger.info({ concurrency: config.ingestWorkerConcurrency }, 'workers started');
  onShutdownSignal(
    services,
    async () => {
      await workers.stop();
      await telemetryServer?.close();
      await services.close();
    },
    { deadlineMs: config.shutdownTimeoutMs },
  );
}
