import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every response received through the test helpers is checked against the OpenAPI document;
    // whatever a file's hooks started through the helpers is stopped after the file (lifecycle.ts).
    setupFiles: ['test/helpers/openapi-setup.ts', 'test/helpers/teardown-setup.ts'],
    // Each file runs in its own process against the shared test database; files isolate
    // themselves by creating their own accounts and projects.
    pool: 'forks',
    // Two files at a time. vitest's default on 2 cores is one (cores - 1), and most files spend
    // their time waiting on timers, child processes, databases and Chromium, not on a core:
    // measured on this 2-core machine, the suite took 1,036 s one at a time and 698 s two at a
    // time, with the same 1,132 tests passing.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
