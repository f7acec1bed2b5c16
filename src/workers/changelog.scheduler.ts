import type { Logger } from '../core/logger.js';
import { publishDueEntries } from '../oltp/changelog.repo.js';
import type { Sql } from '../oltp/db.js';
import { DrainLoop } from './drain-loop.js';

/** How often due entries are looked for: a scheduled entry is out at most this late. */
const INTERVAL_MS = 5_000;

/**
 * Publishes scheduled changelog entries when their publish_at comes (docs/api-guide.md
 * "Changelog"). Every worker process runs one; publishDueEntries publishes each entry exactly
 * once among them. `now` is the clock: the wall clock in service, a test's own in tests.
 */
export class ChangelogScheduler {
  readonly #loop: DrainLoop;

  constructor(
    private readonly sql: Sql,
    private readonly logger: Logger,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.#loop = new DrainLoop(() => this.runOnce(), logger, { intervalMs: INTERVAL_MS, failure: 'changelog scheduling failed' });
  }

  start(): void {
    this.#loop.start();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }

  /** Publishes what is due by the clock now; answers the ids this process published. */
  async runOnce(): Promise<string[]> {
    const published: string[] = [];
    for (;;) {
      const batch = await publishDueEntries(this.sql, this.now());
      published.push(...batch.map((entry) => entry.id));
      if (batch.length === 0) break;
    }
    if (published.length > 0) this.logger.info({ entries: published.length }, 'scheduled changelog entries published');
    return published;
  }
}
