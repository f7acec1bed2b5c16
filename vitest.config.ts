import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every response received through the test helpers is checked against the OpenAPI document.
    setupFiles: ['test/helpers/openapi-setup.ts'],
    // Each file runs in its own process against the shared test database; files isolate
    // themselves by creating their own accounts and projects.
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
