import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/eventually.js';
import { logLines, PROCESS_TEST_TIMEOUT_MS } from '../helpers/process.js';
import { call, serviceSetup, startService, stopService } from '../helpers/service.js';

/*
 * The request lines are buffered (core/logger.ts; docs/operations.md, "Telemetry (Prometheus) and
 * logs"): written together, at the latest every 250 ms, and the rest at exit. A real `npm start`
 * process at LOG_LEVEL=info.
 */

const healthLines = (stdout: string) => logLines(stdout).filter((line) => line.msg === 'request' && line.route === '/healthz');

describe('the buffered request log', () => {
  it(
    'writes one line per request without a stop (fewer than a buffer of them), and every line by a graceful stop',
    async () => {
      const setup = await serviceSetup();
      const service = await startService(setup);

      // 10 lines are about 2.3 KB, a fraction of the buffer: only the timed flush writes them.
      const first = 10;
      for (let i = 0; i < first; i++) expect((await call(setup.base, 'GET', '/healthz')).status).toBe(200);
      // Not a measure of the interval (a loaded machine delays any timer): the lines must come
      // while the process keeps running and receives nothing more.
      await eventually('the request lines without a stop', 30_000, async () => healthLines(service.stdout).length === first);

      const more = 25;
      for (let i = 0; i < more; i++) expect((await call(setup.base, 'GET', '/healthz')).status).toBe(200);
      await stopService(service);

      const lines = healthLines(service.stdout);
      expect(lines).toHaveLength(first + more);
      for (const line of lines) {
        expect(line).toEqual(expect.objectContaining({ level: 30, method: 'GET', status: 200, durationMs: expect.any(Number) }));
        expect(line.requestId).toMatch(/^[0-9a-f-]{36}$/);
      }
      // No torn or interleaved line: every line of stdout that looks like JSON parses.
      const jsonish = service.stdout.split('\n').filter((line) => line.startsWith('{'));
      expect(logLines(service.stdout)).toHaveLength(jsonish.length);
      expect(logLines(service.stdout).map((line) => line.msg)).toContain('stopped');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
