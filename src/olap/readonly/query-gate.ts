/** Thrown when a query cannot get a turn: too many waiting, or its time ran out while it waited. */
export class QueryGateBusy extends Error {
  override name = 'QueryGateBusy';
  constructor(
    message: string,
    /** Seconds after which a retry may find a turn. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

type Waiter = { admit: () => void; timer: NodeJS.Timeout };

/**
 * Lets a few heavy queries run at a time (operator SQL), in arrival order; the others wait, each
 * at most until its own deadline, so the time it waits counts against its limit. A turn ends when
 * the engine is done with the query (`release`), not when its caller gave up, so a runaway query
 * still holds its turn.
 */
export class QueryGate {
  private running = 0;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly options: {
      /** Queries in the engine at once. */
      maxRunning: number;
      /** Queries waiting for a turn at most; more are refused at once. */
      maxWaiting: number;
      /** Retry-After of a refusal. */
      retryAfterSeconds: number;
      /** What waits here, as refusals name it; default "operator queries". */
      label?: string;
    },
  ) {}

  private get label(): string {
    return this.options.label ?? 'operator queries';
  }

  /** Waits for a turn until `deadline` (epoch ms); resolves with the function that ends it. */
  async enter(deadline: number): Promise<() => void> {
    if (this.running < this.options.maxRunning && this.waiting.length === 0) {
      this.running += 1;
      return this.turn();
    }
    if (this.waiting.length >= this.options.maxWaiting) {
      throw new QueryGateBusy(`too many ${this.label} at once; retry later`, this.options.retryAfterSeconds);
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(
          () => {
            this.waiting.splice(this.waiting.indexOf(waiter), 1);
            reject(
              new QueryGateBusy(`the time limit ran out while earlier ${this.label} ran; retry later`, this.options.retryAfterSeconds),
            );
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      this.waiting.push(waiter);
    });
    return this.turn();
  }

  /** Ends a turn: it passes straight to the next waiter (running stays), or frees a place. */
  private turn(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next.admit();
      else this.running -= 1;
    };
  }
}
