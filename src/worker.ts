import { startProcess } from './runtime/process-entry.js';

/**
 * `npm run worker`: the queue consumer and outbox relay as a process of their own
 * (runtime/worker-process.ts). The config is read first, before the service's modules load.
 */
startProcess(() => import('./runtime/worker-process.js'));
