import { apiTime } from '../core/time.js';
import type { Sql, SqlLike } from './db.js';
import { changeFeedbackStatus, findFeedback } from './feedback.repo.js';
import type { FeedbackRow } from './feedback.row.js';
import { changelogPublished } from './notification-payload.js';
import { recordNotification } from './notifications.repo.js';

export const CHANGELOG_STATES = ['draft', 'scheduled', 'published'] as const;
export type ChangelogState = (typeof CHANGELOG_STATES)[number];

export type LinkedItem = { id: string; title: string };

export type ChangelogEntryRow = {
  id: string;
  project_id: string;
  title: string;
  body: string;
  html: string;
  category: string | null;
  state: ChangelogState;
  publish_at: Date | null;
  published_at: Date | null;
  /** Publishing moves the linked items to `completed` (in the publish transaction). */
  complete_linked: boolean;
  created_at: Date;
  updated_at: Date;
  /** The linked items in the owner's order; a deleted item has left the list. */
  linked: LinkedItem[];
};

/** An entry's columns with its linked items (id and title, in order) as one JSON array. */
function entryColumns(sql: SqlLike) {
  return sql`
    e.id, e.project_id, e.title, e.body, e.html, e.category, e.state, e.publish_at, e.published_at,
    e.complete_linked, e.created_at, e.updated_at,
    coalesce((
      select json_agg(json_build_object('id', f.id, 'title', f.title) order by i.position)
      from changelog_entry_items i join feedbacks f on f.id = i.feedback_id
      where i.entry_id = e.id
    ), '[]'::json) as linked`;
}

export type EntryContent = {
  title: string;
  body: string;
  html: string;
  category: string | null;
  linkedFeedbackIds: string[];
  /** Set: scheduled for then; null: a draft. */
  publishAt: Date | null;
  completeLinked: boolean;
};

/** Ids of `ids` that are not items of the project: a link to them is refused. */
export async function foreignItemIds(sql: SqlLike, projectId: string, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await sql<{ id: string }[]>`
    select id from feedbacks where project_id = ${projectId} and id = any(${ids}::uuid[])`;
  const known = new Set(rows.map((row) => row.id));
  return ids.filter((id) => !known.has(id));
}

async function replaceLinks(sql: SqlLike, entryId: string, ids: string[]): Promise<void> {
  await sql`delete from changelog_entry_items where entry_id = ${entryId}`;
  if (ids.length === 0) return;
  await sql`
    insert into changelog_entry_items (entry_id, feedback_id, position)
    select ${entryId}, id, position - 1 from unnest(${ids}::uuid[]) with ordinality as x(id, position)`;
}

export async function findEntry(sql: SqlLike, projectId: string, id: string): Promise<ChangelogEntryRow | null> {
  const [row] = await sql<ChangelogEntryRow[]>`
    select ${entryColumns(sql)} from changelog_entries e where e.id = ${id} and e.project_id = ${projectId}`;
  return row ?? null;
}

/** A new entry: a draft, or scheduled when `publishAt` is set. */
export async function createEntry(sql: Sql, projectId: string, content: EntryContent): Promise<ChangelogEntryRow> {
  return sql.begin(async (tx) => {
    const [created] = await tx<{ id: string }[]>`
      insert into changelog_entries (project_id, title, body, html, category, state, publish_at, complete_linked)
      values (${projectId}, ${content.title}, ${content.body}, ${content.html}, ${content.category},
              ${content.publishAt ? 'scheduled' : 'draft'}, ${content.publishAt}, ${content.completeLinked})
      returning id`;
    const id = (created as { id: string }).id;
    await replaceLinks(tx, id, content.linkedFeedbackIds);
    return (await findEntry(tx, projectId, id)) as ChangelogEntryRow;
  });
}

/** Every entry of the project, for its owner: newest first (published, scheduled or written). */
export async function listEntries(sql: SqlLike, projectId: string): Promise<ChangelogEntryRow[]> {
  return sql<ChangelogEntryRow[]>`
    select ${entryColumns(sql)} from changelog_entries e
    where e.project_id = ${projectId}
    order by coalesce(e.published_at, e.publish_at, e.created_at) desc, e.id desc`;
}

/** The published entries, newest first: what readers see (drafts and scheduled ones never). */
export async function listPublishedEntries(sql: SqlLike, projectId: string, limit: number): Promise<ChangelogEntryRow[]> {
  return sql<ChangelogEntryRow[]>`
    select ${entryColumns(sql)} from changelog_entries e
    where e.project_id = ${projectId} and e.state = 'published'
    order by e.published_at desc, e.id desc
    limit ${limit}`;
}

export type EntryChange = Partial<Omit<EntryContent, 'publishAt' | 'completeLinked'>> & {
  /** undefined: unchanged. Refused once published: publishing has done (or not done) it. */
  completeLinked?: boolean | undefined;
  /** undefined: unchanged; null: back to a draft; a date: scheduled for then. */
  publishAt?: Date | null | undefined;
};

export type UpdateEntryResult = { kind: 'updated'; entry: ChangelogEntryRow } | { kind: 'not_found' } | { kind: 'refused'; reason: string };

/**
 * Changes an entry under its row lock. A published entry's content may be corrected (the
 * correction is never announced again); its schedule may not change: it is out.
 */
export async function updateEntry(sql: Sql, projectId: string, id: string, change: EntryChange): Promise<UpdateEntryResult> {
  return sql.begin(async (tx) => {
    const [locked] = await tx<{ state: ChangelogState }[]>`
      select state from changelog_entries where id = ${id} and project_id = ${projectId} for update`;
    if (!locked) return { kind: 'not_found' };
    if (change.publishAt !== undefined && locked.state === 'published') {
      return { kind: 'refused', reason: 'publish_at: the entry is published; its schedule no longer applies' };
    }
    if (change.completeLinked !== undefined && locked.state === 'published') {
      return { kind: 'refused', reason: 'complete_linked: the entry is published; its items were (or were not) completed then' };
    }
    const schedule =
      change.publishAt === undefined ? tx`` : tx`, state = ${change.publishAt ? 'scheduled' : 'draft'}, publish_at = ${change.publishAt}`;
    await tx`
      update changelog_entries set
        title = coalesce(${change.title ?? null}, title),
        body = coalesce(${change.body ?? null}, body),
        html = coalesce(${change.html ?? null}, html),
        category = ${change.category === undefined ? tx`category` : change.category},
        complete_linked = coalesce(${change.completeLinked ?? null}, complete_linked),
        updated_at = now()
        ${schedule}
      where id = ${id}`;
    if (change.linkedFeedbackIds !== undefined) await replaceLinks(tx, id, change.linkedFeedbackIds);
    return { kind: 'updated', entry: (await findEntry(tx, projectId, id)) as ChangelogEntryRow };
  });
}

export async function deleteEntry(sql: SqlLike, projectId: string, id: string): Promise<ChangelogEntryRow | null> {
  const entry = await findEntry(sql, projectId, id);
  if (!entry) return null;
  await sql`delete from changelog_entries where id = ${id} and project_id = ${projectId}`;
  return entry;
}

export type PublishResult = { kind: 'published'; entry: ChangelogEntryRow; now: boolean } | { kind: 'not_found' };

type LockedEntry = { id: string; project_id: string; title: string; html: string; category: string | null; complete_linked: boolean };

/**
 * The publish transaction of an entry whose row the caller has locked and found unpublished: with
 * `complete_linked`, each linked item moves to `completed` (its status-change notification folded
 * into the entry's email: integrations only); the entry becomes published at `at`; and its one
 * `changelog.published` notification is recorded, with snapshots of the linked items as they are
 * now. All of it commits or none: the announcement exists exactly when the entry is published.
 */
async function publishLocked(tx: SqlLike, entry: LockedEntry, at: Date): Promise<void> {
  const linked = (
    await tx<{ feedback_id: string }[]>`
      select feedback_id from changelog_entry_items where entry_id = ${entry.id} order by position`
  ).map((row) => row.feedback_id);
  const completed: string[] = [];
  if (entry.complete_linked) {
    // In id order, as merges and votes lock items: concurrent writers wait, never deadlock.
    for (const id of [...linked].sort()) {
      const result = await changeFeedbackStatus(tx, entry.project_id, id, { status: 'completed' }, { foldedIntoEntry: entry.id });
      // A merged item's status is its target's; an item already completed does not change.
      if (result.kind === 'updated' && result.previousStatus !== 'completed') completed.push(id);
    }
  }
  await tx`
    update changelog_entries set state = 'published', published_at = ${at}, updated_at = now()
    where id = ${entry.id}`;
  const items: FeedbackRow[] = [];
  for (const id of linked) {
    const item = await findFeedback(tx, entry.project_id, id, undefined);
    if (item) items.push(item);
  }
  const announced = { id: entry.id, title: entry.title, html: entry.html, category: entry.category, published_at: apiTime(at) };
  await recordNotification(tx, changelogPublished(entry.project_id, announced, items, completed));
}

/**
 * Publishes an entry at `at`, once: the state moves to `published` only from draft or scheduled,
 * under the row's lock, so a second publish (a double click, a retry, the scheduler at the same
 * moment) finds it published and changes nothing, and tells nobody again. `completeLinked`, when
 * given, is the entry's `complete_linked` from now on (ignored for a published entry). `now`
 * says whether this call published it.
 */
export async function publishEntry(
  sql: Sql,
  projectId: string,
  id: string,
  at: Date,
  options: { completeLinked?: boolean | undefined } = {},
): Promise<PublishResult> {
  return sql.begin(async (tx) => {
    const [locked] = await tx<(LockedEntry & { state: ChangelogState })[]>`
      select id, project_id, title, html, category, complete_linked, state
      from changelog_entries where id = ${id} and project_id = ${projectId} for update`;
    if (!locked) return { kind: 'not_found' as const };
    const now = locked.state !== 'published';
    if (now) {
      const completeLinked = options.completeLinked ?? locked.complete_linked;
      if (completeLinked !== locked.complete_linked) {
        await tx`update changelog_entries set complete_linked = ${completeLinked} where id = ${id}`;
      }
      await publishLocked(tx, { ...locked, complete_linked: completeLinked }, at);
    }
    return { kind: 'published' as const, entry: (await findEntry(tx, projectId, id)) as ChangelogEntryRow, now };
  });
}

/**
 * Publishes every scheduled entry whose time has come by `at` (the scheduler's clock), each at
 * its own publish_at, one transaction per entry (the same publish as POST …/publish, its
 * notification and `complete_linked` included), and answers their ids. Each entry is taken with
 * `for update skip locked` and the state predicate, which PostgreSQL checks again once it has the
 * lock: an entry is published exactly once however many worker processes run this at the same
 * moment, and they share the work instead of waiting for each other.
 */
export async function publishDueEntries(sql: Sql, at: Date, limit = 100): Promise<{ id: string; project_id: string }[]> {
  const published: { id: string; project_id: string }[] = [];
  while (published.length < limit) {
    const entry = await sql.begin(async (tx) => {
      const [due] = await tx<(LockedEntry & { publish_at: Date })[]>`
        select id, project_id, title, html, category, complete_linked, publish_at
        from changelog_entries
        where state = 'scheduled' and publish_at <= ${at}
        order by publish_at, id
        limit 1
        for update skip locked`;
      if (!due) return null;
      await publishLocked(tx, due, due.publish_at);
      return { id: due.id, project_id: due.project_id };
    });
    if (!entry) break;
    published.push(entry);
  }
  return published;
}
