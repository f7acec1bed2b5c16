import { startProcess } from './runtime/process-entry.js';

/**
 * `npm start`: migrate, serve, and (with embedded ClickHouse or without Redis) run the workers
 * in this process (runtime/api-process.ts). The config is read first, before the service's modules
 * load, so a bad variable is named at once.
 */
startProcess(() => import('./runtime/api-process.js'));
