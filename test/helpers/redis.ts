import { Redis } from 'ioredis';
import { TEST_REDIS_URL } from './server.js';

/**
 * Whether the Redis of the BullMQ-mode tests answers. When it does not, those tests are skipped
 * and this says so on stderr: a machine without Redis never skips them silently.
 */
export async function redisAvailable(): Promise<boolean> {
  const redis = new Redis(TEST_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000 });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    process.stderr.write(`\nNOTICE: Redis at ${TEST_REDIS_URL} is unreachable: the BullMQ-mode tests are SKIPPED.\n\n`);
    return false;
  } finally {
    redis.disconnect();
  }
}

export { eventually } from './eventually.js';
