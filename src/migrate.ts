import { ConfigError, loadConfig } from './config.js';
import { createAppContext } from './context.js';
import { migratePostgres } from './oltp/migrations.js';

/** `npm run migrate`: applies pending migrations and exits. Safe to run twice or concurrently. */
async function main() {
  const config = loadConfig();
  const ctx = await createAppContext(config);
  try {
    const applied = await migratePostgres(ctx.sql);
    ctx.logger.info({ migrations: applied }, applied.length ? 'postgres migrations applied' : 'postgres schema up to date');
  } finally {
    await ctx.close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof ConfigError ? error.message : error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
