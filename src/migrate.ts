import { startProcess } from './runtime/process-entry.js';

/**
 * `npm run migrate`: applies pending migrations and exits (runtime/migrate-process.ts). The config
 * is read first, before the service's modules load.
 */
startProcess(() => import('./runtime/migrate-process.js'));
