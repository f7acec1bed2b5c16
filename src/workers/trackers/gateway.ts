import type { Logger } from '../../core/logger.js';
import type { TrackerGateway } from '../../core/trackers.js';
import { githubApi } from './github.client.js';
import { guardedHttp } from './guarded-fetch.js';
import { linearApi } from './linear.client.js';

/**
 * The tracker calls of a process, built once at start-up (src/runtime/services.ts) and handed to
 * the API and the workers: GitHub through @octokit/rest, Linear through @linear/sdk, both behind
 * the SSRF guard of webhooks and the delivery time limit.
 */
export function createTrackerGateway(options: { allowPrivate: boolean; timeoutMs: number; logger: Logger }): TrackerGateway {
  const http = guardedHttp(options);
  return {
    github: githubApi(http, options.logger),
    linear: linearApi(http),
    refusedApiUrl(url) {
      try {
        http.checkUrl(url);
        return null;
      } catch (error) {
        return (error as Error).message;
      }
    },
  };
}
