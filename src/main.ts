import type { Server } from 'node:http';
import { buildApp } from './api/app.js';
import { ConfigError, loadConfig } from './config.js';
import { createAppContext } from './context.js';
import { migratePostgres } from './oltp/migrations.js';

/** `npm start`: configure, migrate, serve; on SIGTERM/SIGINT stop accepting, finish, close, exit 0. */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const ctx = await createAppContext(config);
  const { logger } = ctx;
  const applied = await migratePostgres(ctx.sql);
  if (applied.length > 0) logger.info({ migrations: applied }, 'postgres migrations applied');

  const app = buildApp(ctx);
  const server: Server = app.listen(config.port, config.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ host: config.host, port }, 'feedback service listening');
  if (ctx.operatorTokenCreated) printFirstStartHelp(ctx.operatorToken, port, config.dataDir);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    server.close();
    server.closeIdleConnections();
    // Requests in flight get a few seconds to finish before their sockets are cut.
    const forceClose = setTimeout(() => server.closeAllConnections(), 10_000);
    forceClose.unref();
    await new Promise((resolve) => server.once('close', resolve));
    await ctx.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

function printFirstStartHelp(operatorToken: string, port: number, dataDir: string) {
  const base = `http://127.0.0.1:${port}`;
  process.stdout.write(
    [
      '',
      `Operator token (stored in ${dataDir}/operator-token): ${operatorToken}`,
      'Create an account (its admin token creates projects and their API keys):',
      `  curl -s -X POST ${base}/api/v1/admin/accounts -H 'Authorization: Bearer ${operatorToken}' -H 'Content-Type: application/json' -d '{"email":"owner@example.com","plan":"free"}'`,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`start-up failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
