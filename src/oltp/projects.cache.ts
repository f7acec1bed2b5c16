import type { Sql } from './db.js';
import { findProjectByApiKeyHash, findProjectByPublishableKey, type ProjectWithPlan } from './projects.repo.js';

/** The channel the triggers of sql/postgres/006_auth_change_notify.sql notify on. */
export const AUTH_CHANGES_CHANNEL = 'auth_changes';

type Entry = { project: ProjectWithPlan; expiresAt: number };

/**
 * API-key lookups, remembered in process. Every key-authenticated request needs its project and
 * plan; asking PostgreSQL each time was the largest single cost of POST /events/track
 * (BENCHMARKS.md). An entry is dropped as soon as anything it says may have changed:
 *
 * - the project or account changed in this process: the routes that change them call
 *   `forgetProject` / `forgetAccount` before they answer, so the next request here sees it;
 * - it changed anywhere else (another API process, a manual UPDATE): triggers on `projects`
 *   and `accounts` send a NOTIFY, which every process LISTENs to;
 * - the LISTEN connection was lost: notifications may have been missed, so everything goes
 *   when postgres.js has re-established it;
 * - in any case after `ttlMs`: the bound on staleness while that connection is down.
 *
 * Only hits are kept: an unknown key is looked up every time (its callers are slowed by the
 * failed-authentication budget instead), so a key that becomes valid works at once.
 */
export class ProjectKeyCache {
  readonly #entries = new Map<string, Entry>();
  /** Keys (hex hashes) per project and per account, to forget them on a notification. */
  readonly #byProject = new Map<string, Set<string>>();
  readonly #byAccount = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a lookup that started before one must not be stored. */
  #generation = 0;
  #listening = false;
  #unlisten: (() => Promise<void>) | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly ttlMs: number,
  ) {}

  /**
   * Starts following changes (LISTEN on a connection of its own). Until then, and always with
   * `ttlMs` 0, lookups go to PostgreSQL every time.
   */
  async listen(): Promise<void> {
    if (this.ttlMs <= 0) return;
    const { unlisten } = await this.sql.listen(
      AUTH_CHANGES_CHANNEL,
      (payload) => this.#onNotification(payload),
      () => {
        // Called on every (re)connection: changes made while it was down were never heard.
        this.clear();
        this.#listening = true;
      },
    );
    this.#unlisten = unlisten;
  }

  async close(): Promise<void> {
    this.#listening = false;
    this.clear();
    await this.#unlisten?.().catch(() => undefined);
  }

  /**
   * The remembered project of an API key (by its sha256 in hex), or undefined when it is not
   * remembered (then ask `lookup`). Synchronous: a hit, the common case on the ingestion path,
   * costs no await (BENCHMARKS.md, "BullMQ request path").
   */
  cached(keyHex: string): ProjectWithPlan | undefined {
    if (!this.#listening) return undefined;
    const entry = this.#entries.get(keyHex);
    return entry && entry.expiresAt > Date.now() ? entry.project : undefined;
  }

  /**
   * The project of an API key (by its sha256), or null for an unknown key. `keyHex` is the hash
   * in hex when the caller has it already.
   */
  async lookup(keyHash: Buffer, keyHex?: string): Promise<ProjectWithPlan | null> {
    if (!this.#listening) return findProjectByApiKeyHash(this.sql, keyHash);
    const key = keyHex ?? keyHash.toString('hex');
    const entry = this.#entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.project;
    const generation = this.#generation;
    const project = await findProjectByApiKeyHash(this.sql, keyHash);
    if (project && generation === this.#generation && this.#listening) this.#store(key, project);
    return project;
  }

  /**
   * The project of a publishable key (pk_…, docs/widget.md), or null. Such a key is public, so it
   * is looked up as is; it shares the cache (and its invalidation) with the secret keys, under a
   * prefix no sha256 hex can take.
   */
  cachedPublishable(key: string): ProjectWithPlan | undefined {
    return this.cached(`pk:${key}`);
  }

  async lookupPublishable(key: string): Promise<ProjectWithPlan | null> {
    if (!this.#listening) return findProjectByPublishableKey(this.sql, key);
    const cacheKey = `pk:${key}`;
    const generation = this.#generation;
    const project = await findProjectByPublishableKey(this.sql, key);
    if (project && generation === this.#generation && this.#listening) this.#store(cacheKey, project);
    return project;
  }

  forgetProject(projectId: string): void {
    this.#generation++;
    this.#forget(this.#byProject.get(projectId));
  }

  forgetAccount(accountId: string): void {
    this.#generation++;
    this.#forget(this.#byAccount.get(accountId));
  }

  clear(): void {
    this.#generation++;
    this.#entries.clear();
    this.#byProject.clear();
    this.#byAccount.clear();
  }

  #store(key: string, project: ProjectWithPlan): void {
    this.#entries.set(key, { project, expiresAt: Date.now() + this.ttlMs });
    addTo(this.#byProject, project.id, key);
    addTo(this.#byAccount, project.account_id, key);
  }

  #forget(keys: Set<string> | undefined): void {
    for (const key of keys ?? []) {
      const entry = this.#entries.get(key);
      this.#entries.delete(key);
      if (entry) {
        this.#byProject.delete(entry.project.id);
        this.#byAccount.get(entry.project.account_id)?.delete(key);
      }
    }
  }

  /** Payload `project:<uuid>` or `account:<uuid>` (see the migration's trigger function). */
  #onNotification(payload: string): void {
    const [kind, id] = payload.split(':');
    if (kind === 'project' && id) this.forgetProject(id);
    else if (kind === 'account' && id) this.forgetAccount(id);
    else this.clear();
  }
}

function addTo(index: Map<string, Set<string>>, id: string, key: string): void {
  let keys = index.get(id);
  if (!keys) {
    keys = new Set();
    index.set(id, keys);
  }
  keys.add(key);
}
