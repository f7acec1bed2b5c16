import { Redis } from 'ioredis';

/** A separate connection for blocking consumers (BullMQ workers need maxRetriesPerRequest null). */
export function workerRedis(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}
