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

type FairWaiter = { admit: () => void; timer: NodeJS.Timeout };

/** Where a turn of the FairGate ends: when `until` settles, or at `giveUpAt` (epoch ms) if the engine has not let go by then. */
export type FairRelease = (until: Promise<void>, giveUpAt: number) => void;

/**
 * The project queries' lane (the JSON route and the ClickHouse interface share it): a few queries
 * in the engine at once, shared fairly between accounts (issue 37).
 * - An account runs at most `perAccountRunning` of the `maxRunning` turns (fewer than all, so a
 *   turn is always left for another account: one account's long queries never make another's
 *   wait for them), and holds at most half of the waiting places.
 * - A freed turn goes to the accounts that wait in turn (round robin), each account's queries in
 *   their order, so an account with many waiting queries cannot go before one with a single query.
 * - Each waits at most until its own deadline, so the wait counts against its time limit.
 * - A turn ends when the engine is done with its query. If the engine has not let go by the query's
 *   deadline plus a grace (it was cancelled at the deadline), the turn is given back anyway and the
 *   query counted as abandoned, so one query the engine cannot stop never holds the lane; while
 *   `maxAbandoned` abandoned queries are still in the engine, a further one keeps its turn (each
 *   holds one of the engine's threads: the process must keep the rest).
 */
export class FairGate {
  private running = 0;
  private waitingCount = 0;
  private readonly runningBy = new Map<string, number>();
  /** Waiting queries by account; the Map's order is the round robin's. */
  private readonly waiting = new Map<string, FairWaiter[]>();
  /** Queries given up on whose engine work has not ended yet. */
  abandoned = 0;

  /**
   * Queries the engine may still be working on: those holding a turn and those given up on. A
   * cancelled request leaves its query here until the engine lets go (the stop reads it).
   */
  get inEngine(): number {
    return this.running + this.abandoned;
  }

  constructor(
    private readonly options: {
      maxRunning: number;
      perAccountRunning: number;
      maxWaiting: number;
      retryAfterSeconds: number;
      maxAbandoned: number;
      /** Told of each query given up on. */
      onAbandoned?: (label: string) => void;
    },
  ) {}

  /** Waits for a turn of `account` until `deadline` (epoch ms); resolves with the function that ends it. */
  async enter(account: string, deadline: number, label: string): Promise<FairRelease> {
    const queue = this.waiting.get(account) ?? [];
    const ownWaiting = queue.length;
    if (this.waitingCount >= this.options.maxWaiting || ownWaiting >= Math.ceil(this.options.maxWaiting / 2)) {
      throw new QueryGateBusy(`too many ${label} at once; retry later`, this.options.retryAfterSeconds);
    }
    await new Promise<void>((resolve, reject) => {
      const waiter: FairWaiter = {
        admit: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(
          () => {
            const mine = this.waiting.get(account);
            const at = mine?.indexOf(waiter) ?? -1;
            if (mine && at >= 0) {
              mine.splice(at, 1);
              this.waitingCount -= 1;
              if (mine.length === 0) this.waiting.delete(account);
            }
            reject(new QueryGateBusy(`the time limit ran out while earlier ${label} ran; retry later`, this.options.retryAfterSeconds));
          },
          Math.max(0, deadline - Date.now()),
        ),
      };
      queue.push(waiter);
      if (!this.waiting.has(account)) this.waiting.set(account, queue);
      this.waitingCount += 1;
      this.dispatch();
    });
    return this.turn(account, label);
  }

  /** Gives free turns to the waiting accounts in turn, each below its own share. */
  private dispatch(): void {
    while (this.running < this.options.maxRunning) {
      let chosen: string | undefined;
      for (const [account] of this.waiting) {
        if ((this.runningBy.get(account) ?? 0) < this.options.perAccountRunning) {
          chosen = account;
          break;
        }
      }
      if (chosen === undefined) return;
      const queue = this.waiting.get(chosen) as FairWaiter[];
      const next = queue.shift() as FairWaiter;
      // To the end of the round: the other waiting accounts go first next time.
      this.waiting.delete(chosen);
      if (queue.length > 0) this.waiting.set(chosen, queue);
      this.waitingCount -= 1;
      this.running += 1;
      this.runningBy.set(chosen, (this.runningBy.get(chosen) ?? 0) + 1);
      next.admit();
    }
  }

  private turn(account: string, label: string): FairRelease {
    let used = false;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      this.running -= 1;
      const left = (this.runningBy.get(account) ?? 1) - 1;
      if (left > 0) this.runningBy.set(account, left);
      else this.runningBy.delete(account);
      this.dispatch();
    };
    return (until, giveUpAt) => {
      if (used) return;
      used = true;
      let settled = false;
      let abandoned = false;
      const timer = setTimeout(
        () => {
          if (settled || this.abandoned >= this.options.maxAbandoned) return;
          abandoned = true;
          this.abandoned += 1;
          this.options.onAbandoned?.(label);
          free();
        },
        Math.max(0, giveUpAt - Date.now()),
      );
      timer.unref();
      const done = () => {
        settled = true;
        clearTimeout(timer);
        if (abandoned) this.abandoned -= 1;
        free();
      };
      void until.then(done, done);
    };
  }
}
