import type { Redis } from 'ioredis';
import { eventKey, type IngestEvent } from '../../core/event.js';
import { BITS_SET, BLOCK_BITS, bitsOf, blockOf, blocksPerBucket, bucketOf, ID_BUCKET_MS, ID_BUCKETS, idHash } from '../id-filter.js';

/**
 * How long a claim (the first event of a client eventId, until the worker has stored it) is kept
 * at most: longer than a job's retries (about 68 minutes, ingest.queue.ts). The worker removes it
 * as soon as the event is in ClickHouse; this only bounds one a crash left behind.
 */
export const CLAIM_TTL_SECONDS = 2 * 3600;
/**
 * A bucket's filter is cut into strings of at most this: Redis allocates a string whole at its
 * first write (zero-filled up to the offset), blocking every client meanwhile: small strings
 * keep each such allocation short. Measured on the shared test Redis under load: the first claim
 * of a bucket took 1.5 s with 7 MB strings.
 */
const SHARD_BYTES = 512 * 1024;

/**
 * Per event, in order: 0 claimed now (a new eventId), 1 maybe stored (the filter knows it:
 * confirm in ClickHouse), or the JSON of the first event (claimed before, not yet stored).
 *
 * ARGV: bucket key prefix, current bucket, buckets in the window, when the current bucket's
 * filter expires (Unix seconds: once no bucket's window includes it), claim TTL,
 * check the filter (1/0), number of events; then per event the claim key, the event's JSON,
 * the shard, and BITS_SET bit offsets in that shard.
 */
const CLAIM_SCRIPT = `
local prefix, current, buckets = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local expireAt, claimTtl, check, count = ARGV[4], ARGV[5], ARGV[6] == '1', tonumber(ARGV[7])
local k = ${BITS_SET}
local out = {}
local i = 8
for e = 1, count do
  local claim, json, shard, base = ARGV[i], ARGV[i + 1], ARGV[i + 2], i + 3
  local first = redis.call('GET', claim)
  if first then
    out[e] = first
  else
    local maybe = false
    if check then
      for b = current - buckets + 1, current do
        local key = prefix .. b .. ':' .. shard
        local all = true
        for j = 0, k - 1 do
          if redis.call('GETBIT', key, ARGV[base + j]) == 0 then all = false break end
        end
        if all then maybe = true break end
      end
    end
    if maybe then
      out[e] = 1
    else
      redis.call('SET', claim, json, 'EX', claimTtl)
      local key = prefix .. current .. ':' .. shard
      local args = {}
      for j = 0, k - 1 do
        args[#args + 1] = 'SET' args[#args + 1] = 'u1' args[#args + 1] = ARGV[base + j] args[#args + 1] = 1
      end
      redis.call('BITFIELD', key, unpack(args))
      redis.call('EXPIREAT', key, expireAt, 'NX')
      out[e] = 0
    end
  end
  i = base + k
end
return out
`;

const SCRIPT_COMMAND = 'feedbackClaimEventIds';
type ScriptCommand = Record<typeof SCRIPT_COMMAND, (...args: (string | number)[]) => Promise<(number | string)[]>>;

/** When a bucket's filter is no longer consulted (the window has moved past it), in Unix seconds. */
export const bucketExpiry = (bucket: number) => Math.ceil(((bucket + ID_BUCKETS) * ID_BUCKET_MS) / 1000) + 60;

export type ClaimOutcome = { kind: 'claimed' } | { kind: 'maybe-stored' } | { kind: 'first'; event: IngestEvent };

/** The Redis key of a client eventId's claim (the name of the earlier 7-day keys: those still answer). */
export const claimKey = (prefix: string, event: IngestEvent) => `${prefix}:event-id:${eventKey(event.project_id, event.event_id)}`;

/**
 * BullMQ mode's memory of client eventIds, in Redis without modules, shared by every API process:
 * - a claim per eventId not yet stored, holding its first event (removed by the worker once stored);
 * - per 4-hour bucket a blocked Bloom filter in plain Redis strings (BITFIELD/GETBIT), 3 bytes
 *   per id at capacity (id-filter.ts), expiring with the window. A hit is confirmed in
 *   ClickHouse by the caller: a "maybe" never answers a duplicate by itself.
 * One script call checks and claims a request's ids atomically, so concurrent retries of one
 * eventId cannot both claim it.
 */
export class RedisIdClaims {
  readonly #blocks: number;
  readonly #shards: number;
  readonly #bucketPrefix: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    idsPerSecond: number,
  ) {
    this.#blocks = blocksPerBucket(idsPerSecond);
    this.#shards = Math.ceil((this.#blocks * BLOCK_BITS) / 8 / SHARD_BYTES);
    // The layout is in the key: a new capacity starts new filters rather than misreading old ones.
    this.#bucketPrefix = `${prefix}:event-ids:${this.#blocks}:`;
    // Sent once, then called by its digest (EVALSHA).
    if (!(SCRIPT_COMMAND in redis)) redis.defineCommand(SCRIPT_COMMAND, { numberOfKeys: 0, lua: CLAIM_SCRIPT });
  }

  /** The key of a bucket's shard (for the driver that measures it, bench/idempotency.ts). */
  shardKey(bucket: number, shard: number): string {
    return `${this.#bucketPrefix}${bucket}:${shard}`;
  }

  get layout(): { blocks: number; shards: number } {
    return { blocks: this.#blocks, shards: this.#shards };
  }

  /** Where an id's bits go: its shard and the bit offsets in that shard's string. */
  placement(key: string): { shard: number; offsets: number[] } {
    const [a, b] = idHash(key);
    const block = blockOf(a, this.#blocks);
    const shard = block % this.#shards;
    const base = Math.floor(block / this.#shards) * BLOCK_BITS;
    return { shard, offsets: Array.from(bitsOf(a, b), (bit) => base + bit) };
  }

  /**
   * Claims each event's id unless it is claimed already (then its first event is returned) or,
   * with `check`, the filter may know it as stored.
   */
  async claim(events: IngestEvent[], check: boolean, now = Date.now()): Promise<ClaimOutcome[]> {
    const args: (string | number)[] = [
      this.#bucketPrefix,
      bucketOf(now),
      ID_BUCKETS,
      bucketExpiry(bucketOf(now)),
      CLAIM_TTL_SECONDS,
      check ? 1 : 0,
      events.length,
    ];
    for (const event of events) {
      const { shard, offsets } = this.placement(eventKey(event.project_id, event.event_id));
      args.push(claimKey(this.prefix, event), JSON.stringify(event), shard, ...offsets);
    }
    const replies = await (this.redis as unknown as ScriptCommand)[SCRIPT_COMMAND](...args);
    return replies.map((reply) => {
      if (typeof reply === 'string') return { kind: 'first', event: JSON.parse(reply) as IngestEvent };
      return reply === 1 ? { kind: 'maybe-stored' } : { kind: 'claimed' };
    });
  }

  /** Removes the claims of events whose enqueue failed. */
  release(events: IngestEvent[]): Promise<void> {
    return releaseClaims(this.redis, this.prefix, events);
  }
}

/**
 * Removes the claims of client eventIds: by the worker once their events are stored (the filter
 * knows them from then on, at 3 bytes instead of the event's JSON), or after a failed enqueue.
 */
export async function releaseClaims(redis: Redis, prefix: string, events: IngestEvent[]): Promise<void> {
  const keys = events.filter((event) => event.id_from_client).map((event) => claimKey(prefix, event));
  if (keys.length > 0) await redis.unlink(...keys);
}
