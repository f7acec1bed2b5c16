import type { IncomingMessage, ServerResponse } from 'node:http';

/** The ClickHouse interface's handler (ch-interface.ts): the request's path below the mount point. */
export type ClickhouseHandler = (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void>;
