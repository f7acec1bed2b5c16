import { defineConfig } from 'vitest/config';

/**
 * Files that measure their own process (its RSS or heap against a bound): in a process that earlier
 * files used, the pages those files freed make the measurement read what it does not mean.
 */
const OWN_PROCESS = [
  'test/api/clickhouse-stream-bounds.test.ts',
  'test/api/live.test.ts',
  'test/api/project-sql-result-bound.test.ts',
  'test/api/protocol.test.ts',
  'test/olap/exports.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    // Every response received through the test helpers is checked against the OpenAPI document;
    // whatever a file's hooks started through the helpers is stopped after the file (lifecycle.ts).
    setupFiles: ['test/helpers/openapi-setup.ts', 'test/helpers/teardown-setup.ts'],
    // Files isolate themselves by creating their own accounts and projects, and their servers their
    // own database, chDB directory and Redis prefix, so most share their worker processes
    // (isolate: false): the modules, the OpenAPI validator and the engine are loaded once per
    // worker, not once per file. Two files at a time: measured, a third ran no faster (the suite
    // is bound by the two cores: Chromium, chDB and spawned services) and loaded the machine to
    // 15, where timing races show. docs/development.md, "How the suite runs", has the figures.
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: 'own-process', include: OWN_PROCESS, isolate: true } },
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: OWN_PROCESS, isolate: false } },
    ],
  },
});
