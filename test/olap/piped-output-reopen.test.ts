import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chdbReadonlyEngine, type ReadonlyEngine } from '../../src/olap/readonly/readonly-session.js';

/*
 * The embedded engine writes a streamed statement's output into a named pipe (piped-output.ts).
 * When it cannot make the output format, it opens that file a second time after the first open
 * was closed empty (issue 37): before the fix, the pipe had lost its reader by then, the engine's
 * open waited forever, and the interface's lane with it. Each case here must settle, with the
 * engine's own error, and the engine must be idle again after it.
 */

let dataDir: string;
let engine: ReadonlyEngine;
const limits = { timeoutMs: 10_000, maxResultRows: 1000, maxThreads: 1, maxResultBytes: 1024 * 1024, engineOutputDefaults: true };

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'piped-reopen-'));
  engine = chdbReadonlyEngine(path.join(dataDir, 'clickhouse'));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** The statement's output and error, or 'hung' when it has not settled within `ms`. */
async function streamed(format: string, ms = 15_000): Promise<{ bytes: number; error?: string } | 'hung'> {
  const session = await engine.open(limits, {});
  try {
    const run = (async () => {
      let bytes = 0;
      try {
        for await (const piece of session.stream('SELECT 1', format)) bytes += piece.byteLength;
        return { bytes };
      } catch (error) {
        return { bytes, error: String(error) };
      }
    })();
    const outcome = await Promise.race([run, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), ms))]);
    if (outcome === 'hung') return outcome;
    const idle = await Promise.race([session.idle().then(() => 'idle'), new Promise((resolve) => setTimeout(() => resolve('busy'), ms))]);
    return idle === 'idle' ? outcome : 'hung';
  } finally {
    session.close();
  }
}

describe('a statement whose output format the engine cannot make', () => {
  // Several tries each: before the fix, 7 of 9 hung (the reader's going raced the second open).
  for (const format of ['Template', 'Protobuf', 'Regexp']) {
    it(`${format}: fails with the engine's error and lets go of the pipe, every time`, async () => {
      for (let i = 0; i < 5; i++) {
        const outcome = await streamed(format);
        expect(outcome).not.toBe('hung');
        expect(outcome === 'hung' ? '' : outcome.error).toMatch(/Code: \d+\. DB::Exception/);
      }
    }, 120_000);
  }

  it('a format it can make still answers its output', async () => {
    expect(await streamed('TabSeparated')).toEqual({ bytes: 2 });
  });
});
