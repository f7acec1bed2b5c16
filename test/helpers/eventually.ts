/** Polls `probe` until it returns true, at most `timeoutMs`; answers how long that took (ms). */
export async function eventually(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  await until(what, timeoutMs, async () => (await probe()) || undefined);
  return Date.now() - started;
}

/** Polls `probe` until it answers a value (not undefined, null or false), at most `timeoutMs`; answers that value. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | null | false>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * A fixed pause. Not for waiting until something happened (that is `eventually`): only where a
 * test gives the system time to do something wrong (store a duplicate, ship too early), or paces
 * the load it generates. Say which at the call.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
