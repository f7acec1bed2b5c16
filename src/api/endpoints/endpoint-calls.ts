import type { Logger } from '../../core/logger.js';
import type { SqlLike } from '../../oltp/db.js';
import { type EndpointCall, recordEndpointCalls } from '../../oltp/saved-query-endpoints.repo.js';

/*
 * The call log of published saved queries (GET …/endpoint/calls), written after the answers and
 * together: at most every FLUSH_MS, in one insert, so a call costs its caller no round trip and
 * the database one statement per few hundred calls under load. A call still held when the
 * process dies unannounced is lost: it is a log line, not data.
 */

const FLUSH_MS = 500;
const MAX_HELD = 5_000;

export type EndpointCallLog = { add(call: EndpointCall): void; flush(): Promise<void> };

export function createEndpointCallLog(sql: SqlLike, logger: Logger): EndpointCallLog {
  let held: EndpointCall[] = [];
  let timer: NodeJS.Timeout | undefined;
  let writing: Promise<void> = Promise.resolve();
  const flush = () => {
    timer = undefined;
    const calls = held;
    held = [];
    writing = writing
      .then(() => recordEndpointCalls(sql, calls))
      .catch((error: unknown) => logger.warn({ err: error, calls: calls.length }, 'query endpoints: calls not recorded'));
    return writing;
  };
  return {
    add(call) {
      if (held.length >= MAX_HELD) return; // the database is behind: the log is the first thing to give up
      held.push(call);
      if (!timer) {
        timer = setTimeout(flush, FLUSH_MS);
        timer.unref();
      }
    },
    flush: () => (held.length > 0 ? flush() : writing),
  };
}
