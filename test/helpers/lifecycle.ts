import { beforeAll, onTestFinished, TestRunner } from 'vitest';

/*
 * How everything a test starts is stopped again, without a teardown block in the test file:
 * - `provide` (behind useTestServer, useBrowser, useEmbeddedClickHouse) starts a resource before
 *   the tests of the file or describe block it is called in, and stops it after them;
 * - `stopWhenDone` (behind startTestServer, spawnScript, makeDataDir, serviceSetup, openQueue,
 *   launchChromium, the receivers) stops what was started inside a test when that test finishes,
 *   what was started by a `provide` with that resource, and what was started in another hook
 *   when the file finishes (teardown-setup.ts runs those in every test file).
 */

type Stop = () => unknown;

const atFileEnd: Stop[] = [];
/** The stops registered while a `provide` starts its resource (hooks of a file run one at a time). */
let providing: Stop[] | undefined;

/**
 * Runs `stop` when what is running now ends: the current test (onTestFinished); the resource a
 * `provide` is starting; else the test file (in another hook, or in a concurrent test, where "the
 * current test" may be another one). Stops run in reverse order of registration: a process stops
 * before its data directory goes.
 */
export function stopWhenDone(stop: Stop): void {
  const test = TestRunner.getCurrentTest();
  if (test && !test.concurrent) onTestFinished(async () => void (await stop()));
  else if (providing) providing.push(stop);
  else atFileEnd.push(stop);
}

/** Runs `stops`, last first, every one even when some fail. */
async function runStops(stops: Stop[]): Promise<void> {
  const errors: unknown[] = [];
  for (let stop = stops.pop(); stop; stop = stops.pop()) {
    try {
      await stop();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} teardown(s) failed`);
}

/** Runs the stops registered outside a test, last first; teardown-setup.ts calls it after each file. */
export function runFileEndStops(): Promise<void> {
  return runStops(atFileEnd);
}

/**
 * A resource for the tests of the current file or describe block (call it there, not in a test):
 * `start` runs in a beforeAll registered here, `stop` after the block's tests. Returns a stand-in
 * that forwards every property to the started resource, so the block reads
 * `const server = useTestServer()` and its tests and hooks use `server` directly. Hooks the block
 * registers after this call run after the start and before the stop. A block whose tests are all
 * skipped starts nothing. `timeoutMs` bounds the start (default: the hook timeout).
 */
export function provide<T extends object>(what: string, start: () => Promise<T>, stop: (value: T) => unknown, timeoutMs?: number): T {
  let value: T | undefined;
  beforeAll(async () => {
    const stops: Stop[] = [];
    const outer = providing;
    providing = stops;
    let started: T;
    try {
      started = await start();
    } catch (error) {
      providing = outer;
      await runStops(stops);
      throw error;
    }
    providing = outer;
    value = started;
    return async () => {
      value = undefined;
      try {
        await stop(started);
      } finally {
        await runStops(stops);
      }
    };
  }, timeoutMs);
  return new Proxy({} as T, {
    get(_, property) {
      if (value === undefined) {
        // `await`, vitest's printer and the like probe these on any object: answer "none".
        if (property === 'then' || typeof property === 'symbol') return undefined;
        throw new Error(`the ${what} is used outside the tests of the block that provides it (it starts in beforeAll)`);
      }
      const member = Reflect.get(value, property, value);
      // A class's method is bound to its instance (Playwright's Browser); an own property is
      // returned as it is: `server.sql` is a function whose properties (`begin`) must stay.
      return typeof member === 'function' && !Object.hasOwn(value, property) ? member.bind(value) : member;
    },
    has: (_, property) => value !== undefined && property in value,
    set(_, property, newValue) {
      if (value === undefined) throw new Error(`the ${what} is not started`);
      return Reflect.set(value, property, newValue);
    },
  });
}
