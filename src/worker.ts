import { configOrExit, exitOnStartupError, migrateAll, onShutdownSignal } from './runtime/bootstrap.js';
import { apiRunsWorkers } from './core/config.js';
import { createAppContext } from './runtime/services.js';
import { startMetricsServer } from './runtime/telemetry-server.js';
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
  const ctx = await createAppContext(config);
  await migrateAll(ctx);
  const workers = startWorkers(ctx);
  const metricsServer = config.metricsPort > 0 ? await startMetricsServer(ctx.metrics.registry, config.metricsPort, config.host) : undefined;
  ctx.logger.info({ concurrency: config.ingestWorkerConcurrency }, 'workers started');
  onShutdownSignal(ctx, async () => {
    await workers.stop();
    await metricsServer?.close();
    await ctx.close();
  });
}

main().catch(exitOnStartupError);
