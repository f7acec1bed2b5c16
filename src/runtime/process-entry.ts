import type { Config } from '../core/config.js';
import { ConfigError, loadConfig } from '../core/config.js';

/*
 * What every entry point (`npm start`, `npm run worker`, `npm run migrate`) does before anything
 * else, kept apart from the modules of the service: the config is read before those load, so a bad
 * variable is named at once (measured 2026-12-02: `PORT=abc npm start` printed its line after
 * 3.7–4.9 s of loading the whole service with tsx before this split, and after 0.75 s with it).
 */

/** Reads the config or exits with the one-line message that names the bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/**
 * Ends a failed start with what failed. A dependency that rejects without an Error (the embedded
 * PostgreSQL's start once rejected with `undefined`) still gets a sentence, never `undefined`.
 */
export function exitOnStartupError(error: unknown): never {
  const text =
    error instanceof Error
      ? (error.stack ?? error.message)
      : error === undefined || error === null || String(error).trim() === ''
        ? 'a start-up step failed without saying why (see the log lines above); check that DATA_DIR is writable and that no other process of this service uses it, then start again'
        : String(error);
  process.stderr.write(`start-up failed: ${text}\n`);
  process.exit(1);
}

/** A process's body, loaded only once its config is known to be valid. */
export type ProcessBody = { run(config: Config): Promise<void> };

/** Reads the config (or exits naming the bad variable), then loads the body and runs it. */
export function startProcess(load: () => Promise<ProcessBody>): void {
  const config = configOrExit();
  load()
    .then((body) => body.run(config))
    .catch(exitOnStartupError);
}
