import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createSql } from '../src/oltp/db.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../src/oltp/embedded-postgres.js';
import { migratePostgres } from '../src/oltp/migrations.js';
import { databaseUrlFor } from './helpers/database.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A freshly migrated database for this test run. */
    databaseUrl: string;
    /** The server itself (database `postgres`), for tests that create databases of their own. */
    postgresServerUrl: string;
  }
}

/**
 * One fresh database per run, on the server of DATABASE_URL, or on an embedded PostgreSQL
 * started here when DATABASE_URL is unset (a fresh machine).
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedPostgresHandle | undefined;
  let embeddedDir: string | undefined;
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    embeddedDir = await mkdtemp(path.join(tmpdir(), 'feedback-test-pg-'));
    // mkdtemp makes it 0700; when we run as root, PostgreSQL runs as `postgres` and must enter it.
    await chmod(embeddedDir, 0o755);
    embedded = await startEmbeddedPostgres(embeddedDir);
    serverUrl = embedded.url;
  }
  const database = `feedback_test_${process.pid}_${Date.now()}`;
  const admin = createSql(serverUrl, { max: 1 });
  await admin`create database ${admin(database)}`;
  const databaseUrl = databaseUrlFor(serverUrl, database);
  const sql = createSql(databaseUrl, { max: 1 });
  await migratePostgres(sql);
  await sql.end();

  project.provide('databaseUrl', databaseUrl);
  project.provide('postgresServerUrl', serverUrl);

  return async () => {
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end();
    await embedded?.stop();
    if (embeddedDir) await rm(embeddedDir, { recursive: true, force: true });
  };
}
