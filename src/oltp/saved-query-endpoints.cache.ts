import type { Sql } from './db.js';
import { AUTH_CHANGES_CHANNEL } from './projects.cache.js';
import { type EndpointForCall, findEndpointForCall } from './saved-query-endpoints.repo.js';

/** The channel the triggers of sql/postgres/024_query_endpoint_change_notify.sql notify on. */
export const QUERY_ENDPOINT_CHANGES_CHANNEL = 'query_endpoint_changes';

type Entry = { endpoint: EndpointForCall; expiresAt: number };

/**
 * The lookups of published saved queries (GET /q/:id), remembered in process: each call needs the
 * endpoint's token hash, its query's text and settings and its project's plan, and asking
 * PostgreSQL for them on every call was most of a cached answer's time (BENCHMARKS.md, issue 39).
 * The token itself is still checked on every call, against the remembered hash. An entry is
 * dropped as soon as anything it says may have changed, as API-key lookups are (projects.cache.ts):
 *
 * - republished, rotated or unpublished in this process: the routes forget it before they answer;
 * - anywhere else (another API process, plain SQL), the endpoint's row, its saved query's text,
 *   its project (suspension, a move) or its account's plan changed: triggers NOTIFY every process
 *   (on this channel, and on `auth_changes` for the project and the account), which LISTENs;
 * - the LISTEN connection was (re)established: notifications may have been missed, so everything goes;
 * - in any case after `ttlMs` (API_KEY_CACHE_SECONDS): the bound on staleness while that
 *   connection is down.
 *
 * Only hits are kept: an unknown id is looked up every time, so a new endpoint answers at once.
 * Until `listen()` has connected, and always with `ttlMs` 0, every lookup goes to PostgreSQL.
 */
export class EndpointLookupCache {
  readonly #entries = new Map<string, Entry>();
  /** Endpoint ids by saved query, project and account, to forget them on a notification. */
  readonly #by = {
    saved_query: new Map<string, Set<string>>(),
    project: new Map<string, Set<string>>(),
    account: new Map<string, Set<string>>(),
  };
  /** Bumped by every invalidation: a lookup that started before one must not be stored. */
  #generation = 0;
  /** The channels whose LISTEN is established; the cache is used only while both are. */
  readonly #listening = new Set<string>();
  readonly #unlisten: (() => Promise<void>)[] = [];

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
  ) {}

  /** Starts following changes (LISTEN, on postgres.js's connection for notifications). */
  async listen(): Promise<void> {
    if (this.ttlMs <= 0) return;
    for (const channel of [QUERY_ENDPOINT_CHANGES_CHANNEL, AUTH_CHANGES_CHANNEL]) {
      const { unlisten } = await this.sql.listen(
        channel,
        (payload) => this.#onNotification(payload),
        () => {
          // Called on every (re)connection: changes made while it was down were never heard.
          this.clear();
          this.#listening.add(channel);
        },
      );
      this.#unlisten.push(unlisten);
    }
  }

  async close(): Promise<void> {
    this.#listening.clear();
    this.clear();
    await Promise.all(this.#unlisten.map((unlisten) => unlisten().catch(() => undefined)));
  }

  /** What a call of the endpoint needs (saved-query-endpoints.repo.ts), or null when there is no such endpoint. */
  async lookup(endpointId: string): Promise<EndpointForCall | null> {
    if (this.#listening.size < 2) return findEndpointForCall(this.sql, endpointId);
    const entry = this.#entries.get(endpointId);
    if (entry && entry.expiresAt > Date.now()) return entry.endpoint;
    const generation = this.#generation;
    const endpoint = await findEndpointForCall(this.sql, endpointId);
    if (endpoint && generation === this.#generation && this.#listening.size === 2) this.#store(endpoint);
    return endpoint;
  }

  /** Forgets one endpoint (republished, rotated or unpublished by this process). */
  forget(endpointId: string): void {
    this.#generation++;
    this.#drop(endpointId);
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    for (const index of Object.values(this.#by)) index.clear();
  }

  #store(endpoint: EndpointForCall): void {
    this.#drop(endpoint.id);
    this.#entries.set(endpoint.id, { endpoint, expiresAt: Date.now() + this.ttlMs });
    addTo(this.#by.saved_query, endpoint.saved_query_id, endpoint.id);
    addTo(this.#by.project, endpoint.project_id, endpoint.id);
    addTo(this.#by.account, endpoint.account_id, endpoint.id);
  }

  #drop(endpointId: string): void {
    const entry = this.#entries.get(endpointId);
    if (!entry) return;
    this.#entries.delete(endpointId);
    const { saved_query_id, project_id, account_id } = entry.endpoint;
    removeFrom(this.#by.saved_query, saved_query_id, endpointId);
    removeFrom(this.#by.project, project_id, endpointId);
    removeFrom(this.#by.account, account_id, endpointId);
  }

  /** `endpoint:<id>`, `saved_query:<id>` (022's triggers), `project:<id>`, `account:<id>` (006's); anything else clears all. */
  #onNotification(payload: string): void {
    const [kind, id] = payload.split(':');
    this.#generation++;
    if (kind === 'endpoint' && id) this.#drop(id);
    else if ((kind === 'saved_query' || kind === 'project' || kind === 'account') && id) {
      for (const endpointId of [...(this.#by[kind].get(id) ?? [])]) this.#drop(endpointId);
    } else this.clear();
  }
}

function addTo(index: Map<string, Set<string>>, id: string, endpointId: string): void {
  let ids = index.get(id);
  if (!ids) {
    ids = new Set();
    index.set(id, ids);
  }
  ids.add(endpointId);
}

function removeFrom(index: Map<string, Set<string>>, id: string, endpointId: string): void {
  const ids = index.get(id);
  ids?.delete(endpointId);
  if (ids?.size === 0) index.delete(id);
}
