import { afterAll } from 'vitest';
import { runFileEndStops } from './lifecycle.js';

/*
 * Loaded into every test file by vitest.config.ts, before the file itself: its afterAll is the
 * file's last, and stops whatever the file's hooks started through the helpers (lifecycle.ts),
 * after the file's own afterAll hooks are done with it.
 */
afterAll(runFileEndStops);
