import type { Logger } from '../core/logger.js';

/**
 * Runs `drain` (work until nothing is left) again and again: at once on start, then
 * `intervalMs` after each run, and at least a second after a failed one, which is logged. `stop`
 * waits for the run in progress. The loop of the outbox relay and the notification dispatcher.
 */
export class DrainLoop {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(
    private readonly drain: () => Promise<unknown>,
    private readonly logger: Logger,
    private readonly options: { intervalMs: number; failure: string },
  ) {}

  start(): void {
    this.#schedule(0);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#running = this.drain()
        .then(
          () => this.#schedule(this.options.intervalMs),
          (error: unknown) => {
            this.logger.warn({ err: error }, this.options.failure);
            this.#schedule(Math.max(1_000, this.options.intervalMs));
          },
        )
        .finally(() => {
          this.#running = undefined;
        });
    }, delayMs);
  }
}
