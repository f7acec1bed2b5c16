import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every response received through the test helpers is checked against the OpenAPI document;
    // whatever a file's hooks started through the helpers is stopped after the file (lifecycle.ts).
    setupFiles: ['test/helpers/openapi-setup.ts', 'test/helpers/teardown-setup.ts'],
    // Each file runs in its own process against the shared test database; files isolate
    // themselves by creating their own accounts and projects. Two files at a time: most files wait
    // on timers, child processes, databases and Chromium, not on a core. Measured on CI's 2-core
    // machine, the same 1,876 tests: two workers 1,212 s and 948 s in `.ci/run`, three 908 s, three sharing their
    // processes across files (isolate: false) 577 s in `.ci/run`. The faster two failed too often:
    // three and four races in two of four runs under their load, and in shared processes a file's
    // RSS measurement read the pages earlier files had freed (test/api/protocol.test.ts). Kept at
    // two, isolated, until those tests measure what they mean under that load
    // (docs/development.md, "How the suite runs").
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
