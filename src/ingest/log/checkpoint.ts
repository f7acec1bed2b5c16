import { randomBytes } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { writeFileAtomically } from './fsync.js';

const CheckpointFile = z.object({
  version: z.literal(1),
  /** Random name of this log, part of every deduplication token: a new log never reuses one. */
  logId: z.string().regex(/^[0-9a-f]{16}$/),
  /** Every frame before this position is in ClickHouse. */
  shipped: z.number().int().min(0),
  /**
   * The range being inserted, recorded before the insert: after a crash it is shipped again,
   * exactly this range under the same token, so ClickHouse drops it if the first insert landed.
   */
  shipping: z.object({ from: z.number().int().min(0), to: z.number().int().min(0) }).nullable(),
});
export type Checkpoint = z.infer<typeof CheckpointFile>;

/** The shipper's progress, in `checkpoint.json` of the log directory, replaced atomically. */
export class CheckpointStore {
  readonly file: string;

  constructor(dir: string) {
    this.file = path.join(dir, 'checkpoint.json');
  }

  /** The stored checkpoint, or a new one (a fresh log) made durable before anything is written. */
  async load(): Promise<Checkpoint> {
    await mkdir(path.dirname(this.file), { recursive: true });
    let text: string | undefined;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (text === undefined) {
      const fresh: Checkpoint = { version: 1, logId: randomBytes(8).toString('hex'), shipped: 0, shipping: null };
      await this.save(fresh);
      return fresh;
    }
    const parsed = CheckpointFile.safeParse(JSON.parse(text));
    if (!parsed.success) throw new Error(`ingest log: ${this.file} is not a valid checkpoint: ${parsed.error.message}`);
    return parsed.data;
  }

  save(checkpoint: Checkpoint): Promise<void> {
    return writeFileAtomically(this.file, JSON.stringify(checkpoint));
  }
}

/** The insert deduplication token of a shipped range: the same range always gets the same token. */
export const rangeToken = (logId: string, from: number, to: number) => `ingest-log:${logId}:${from}-${to}`;
