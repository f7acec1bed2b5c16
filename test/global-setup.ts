import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { createSql } from '../src/oltp/db.js';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/oltp/embedded-postgres.js';
import { migratePostgres } from '../src/oltp/migrations.js';
import { databaseUrlFor } from './helpers/database.js';
import { buildService } from './helpers/service-build.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A freshly migrated database shared by the run (for spawned service processes). */
    databaseUrl: string;
    /** A migrated template: each test server gets a database cloned from it. */
    templateDatabase: string;
    /** Prefix of every database this run creates; teardown drops them all. */
    databasePrefix: string;
    /** The server itself (database `postgres`), for tests that create databases of their own. */
    postgresServerUrl: string;
  }
}

/**
 * Databases for one run, on the server of DATABASE_URL, or on an embedded PostgreSQL started
 * here when DATABASE_URL is unset (a fresh machine): a migrated template that every test server
 * clones (so each file's outbox relay sees only its own facts), and one shared database.
 */
export default async function setup(project: TestProject) {
  // The JavaScript that spawned services run (helpers/service-build.ts): built from the sources
  // of this checkout at every run, so no test can start an older service.
  await buildService();
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
  const prefix = `feedback_test_${process.pid}_${Date.now()}`;
  const admin = createSql(serverUrl, { max: 1 });
  const template = `${prefix}_template`;
  const shared = `${prefix}_shared`;
  for (const database of [template, shared]) {
    await admin`create database ${admin(database)}`;
    const sql = createSql(databaseUrlFor(serverUrl, database), { max: 1 });
    await migratePostgres(sql);
    await sql.end();
  }

  project.provide('databaseUrl', databaseUrlFor(serverUrl, shared));
  project.provide('templateDatabase', template);
  project.provide('databasePrefix', prefix);
  project.provide('postgresServerUrl', serverUrl);

  return async () => {
    const leftovers = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`${prefix}%`}`;
    for (const { datname } of leftovers) {
      await admin`drop database if exists ${admin(datname)} with (force)`;
    }
    await admin.end();
    await embedded?.stop();
    if (embeddedDir) await rm(embeddedDir, { recursive: true, force: true });
  };
}
