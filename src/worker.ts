import { configOrExit, exitOnStartupError, migrateAll, onShutdownSignal } from './runtime/bootstrap.js';
import { apiRunsWorkers } from './core/config.js';
import { createServices } from './runtime/services.js';
import { startTelemetryServer } from './runtime/telemetry-server.js';
import { startWorkers } from './workers/runner.js';

/**
 * `npm run worker`: the queue consumer and outbox relay as a process of their own, for
 * deployments with a ClickHouse server and Redis. With embedded ClickHouse the data directory
 * belongs to the API process, which runs the workers itself.
 */
async function main() {
  const config = configOrExit();
  if (apiRunsWorkers(config)) {
    process.stderr.write(
      'npm run worker needs CLICKHOUSE_URL and REDIS_URL; with embedded ClickHouse or without Redis, npm start runs the workers\n',
    );
    process.exit(1);
  }
  const ctx = await createServices(config);
  await migrateAll(ctx);
  const workers = startWorkers(ctx);
  const telemetryServer =
    config.telemetryPort > 0 ? await startTelemetryServer(ctx.telemetry.registry, config.telemetryPort, config.host) : undefined;
  ctx.logger.info({ concurrency: config.ingestWorkerConcurrency }, 'workers started');
  onShutdownSignal(ctx, async () => {
    await workers.stop();
    await telemetryServer?.close();
    await ctx.close();
  });
}

main().catch(exitOnStartupError);
