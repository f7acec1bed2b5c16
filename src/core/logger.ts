import { type DestinationStream, type Logger, pino } from 'pino';

export type { Logger };

/**
 * How often buffered request lines are written out, at the latest (docs/operations.md, "Logs").
 * Under load the buffer fills first and is written sooner.
 */
export const REQUEST_LOG_FLUSH_MS = 250;
/**
 * Characters of request lines gathered before one write (about 35 lines of ~230): one thread-pool
 * write per line was about 3 µs of an SDK event, 60 µs a request (BENCHMARKS.md, "Issue 31: the
 * remaining budget"). Below sonic-boom's maxWrite (16 KiB), as it requires.
 */
const REQUEST_LOG_BUFFER_CHARS = 8 * 1024;

type Stdout = ReturnType<typeof pino.destination>;
let stdout: Stdout | undefined;

/**
 * The process's one writer of stdout, shared by every logger createLogger makes: one writer, so
 * lines of different loggers never interleave inside a write. It holds back lines until
 * REQUEST_LOG_BUFFER_CHARS have gathered or REQUEST_LOG_FLUSH_MS have passed; pino writes what is
 * left synchronously when the process exits (process.exit after a graceful stop included).
 */
function sharedStdout(): Stdout {
  stdout ??= pino.destination({ dest: 1, sync: false, minLength: REQUEST_LOG_BUFFER_CHARS, periodicFlush: REQUEST_LOG_FLUSH_MS });
  return stdout;
}

/**
 * Every line but the request lines: written at once, as before (a warning or an error is not held
 * back). While a write runs, sonic-boom's flush() does nothing and the line would wait for the
 * timed flush: the end of that write ('drain') flushes it then.
 */
function promptStream(destination: Stdout): DestinationStream {
  let flushOnDrain = false;
  const flushAgain = () => {
    flushOnDrain = false;
    destination.flush();
  };
  return {
    write(line: string) {
      destination.write(line);
      destination.flush();
      if (!flushOnDrain) {
        flushOnDrain = true;
        destination.once('drain', flushAgain);
      }
    },
  };
}

/** The request-line logger of each logger createLogger made (requestLineLogger). */
const requestLoggers = new WeakMap<Logger, Logger>();

export function createLogger(level: string): Logger {
  const destination = sharedStdout();
  const logger = pino(
    {
      level,
      // Secrets must never reach a log line, whatever object a caller passes.
      redact: {
        paths: ['req.headers["x-api-key"]', 'req.headers.authorization', '*.api_key', '*.admin_token', '*.token', 'api_key', 'admin_token'],
        censor: '[redacted]',
      },
    },
    promptStream(destination),
  );
  // Without the redaction paths: the request line's fields are fixed (middleware/request-log.ts)
  // and none is a secret, and matching the wildcard paths cost 40 % of a line.
  requestLoggers.set(logger, pino({ level }, destination));
  return logger;
}

/**
 * The logger of the one line per request: buffered (REQUEST_LOG_BUFFER_CHARS, written at the
 * latest every REQUEST_LOG_FLUSH_MS and at exit), so a SIGKILL can lose the request lines of
 * those last moments, never an event (an event's acknowledgement waits for its own durable write,
 * not for a log line). A logger made elsewhere (a test's) gets a child of itself without the
 * redaction paths, written as that logger writes.
 */
export function requestLineLogger(logger: Logger): Logger {
  return requestLoggers.get(logger) ?? logger.child({}, { redact: { paths: [] } });
}
