import { beforeAll, onTestFinished } from 'vitest';
import { getCurrentTest } from 'vitest/suite';

/*
 * How everything a test starts is stopped again, without a teardown block in the test file:
 * - `provide` (behind useTestServer, useBrowser) starts a resource before the tests of the file
 *   or describe block it is called in, and stops it after them;
 * - `stopWhenDone` (behind startTestServer, spawnScript, makeDataDir, serviceSetup) stops what was
 *   started inside a test when that test finishes, and what was started in a hook when the file
 *   finishes (teardown-setup.ts runs those in every test file).
 */

type Stop = () => unknown;

const atFileEnd: Stop[] = [];

/**
 * Runs `stop` when what is running now ends: the current test (onTestFinished), or the test file
 * when this is called in a hook or a concurrent test (there "the current test" may be another one).
 * Stops run in reverse order of registration: a process stops before its data directory goes.
 */
export function stopWhenDone(stop: Stop): void {
  const test = getCurrentTest();
  if (test && !test.concurrent) onTestFinished(async () => void (await stop()));
  else atFileEnd.push(stop);
}

/** Runs the stops registered outside a test, last first; teardown-setup.ts calls it after each file. */
export async function runFileEndStops(): Promise<void> {
  const errors: unknown[] = [];
  for (let stop = atFileEnd.pop(); stop; stop = atFileEnd.pop()) {
    try {
      await stop();
    } catch (error) {
      errors.push(error);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, `${errors.length} teardown(s) failed`);
}

/**
 * A resource for the tests of the current file or describe block (call it there, not in a test):
 * `start` runs in a beforeAll registered here, `stop` after the block's tests. Returns a stand-in
 * that forwards every property to the started resource, so the block reads
 * `const server = useTestServer()` and its tests and hooks use `server` directly. Hooks the block
 * registers after this call run after the start and before the stop. A block whose tests are all
 * skipped starts nothing.
 */
export function provide<T extends object>(what: string, start: () => Promise<T>, stop: (value: T) => unknown): T {
  let value: T | undefined;
  beforeAll(async () => {
    const started = await start();
    value = started;
    return async () => {
      value = undefined;
      await stop(started);
    };
  });
  return new Proxy({} as T, {
    get(_, property) {
      if (value === undefined) {
        // `await`, vitest's printer and the like probe these on any object: answer "none".
        if (property === 'then' || typeof property === 'symbol') return undefined;
        throw new Error(`the ${what} is used outside the tests of the block that provides it (it starts in beforeAll)`);
      }
      const member = Reflect.get(value, property, value);
      return typeof member === 'function' ? member.bind(value) : member;
    },
    has: (_, property) => value !== undefined && property in value,
    set(_, property, newValue) {
      if (value === undefined) throw new Error(`the ${what} is not started`);
      return Reflect.set(value, property, newValue);
    },
  });
}
