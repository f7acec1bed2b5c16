import { z } from 'zod';
import { renderChangelogHtml } from '../../core/changelog-html.js';
import {
  createEntry,
  deleteEntry,
  findEntry,
  foreignItemIds,
  listEntries,
  listPublishedEntries,
  publishEntry,
  updateEntry,
} from '../../oltp/changelog.repo.js';
import type { Sql } from '../../oltp/db.js';
import { changelogDeliveries } from '../../oltp/deliveries.repo.js';
import { keyProject } from '../auth.js';
import { defineRoute } from '../define-route.js';
import { badRequest, conflict, notFound } from '../errors.js';
import {
  body,
  defaultError,
  describe,
  error,
  json,
  optionalBody,
  ProjectPath,
  projectId,
  withFieldDocs,
} from '../shared/building-blocks.js';
import {
  ChangelogDeliveriesResponse,
  ChangelogEntryResponse,
  ChangelogQuery,
  CreateChangelogEntryBody,
  PublicChangelogEntryResponse,
  PublishChangelogEntryBody,
  presentChangelogDeliveries,
  presentEntry,
  presentPublicEntry,
  UpdateChangelogEntryBody,
} from './changelog.schema.js';

const EntryPath = z.object({ id: projectId, entryId: describe(z.uuid({ error: 'changelog entry not found' }), 'Changelog entry id.') });

const FIELD_DOCS = {
  title: 'The entry’s title, 1 to 200 characters.',
  body: 'Markdown, at most 20,000 characters; rendered to sanitized HTML on the server (`html`).',
  category: 'Optional label, e.g. `New` or `Fixed`, at most 50 characters; null clears it.',
  linkedFeedbackIds: 'Items of this project the entry ships, in order (at most 50). Also read as `linked_feedback_ids`.',
  publishAt: 'Schedule the entry: it publishes itself at this time, once. Null makes it a draft again. Also read as `publish_at`.',
  completeLinked:
    'Publishing (now, or by the schedule) also moves the linked items to `completed`, in the same transaction; their voters hear of it in the entry’s email, not in a status email of their own. Default false; cannot change once published. Also read as `complete_linked`.',
};

/** Links name items of the entry's own project only: an id of another is a 400, never a leak. */
async function checkLinks(sql: Sql, project: string, ids: string[] | undefined) {
  if (!ids) return;
  if (new Set(ids).size !== ids.length) throw badRequest('linkedFeedbackIds: an item is listed twice');
  const foreign = await foreignItemIds(sql, project, ids);
  if (foreign.length > 0) throw badRequest(`linkedFeedbackIds: not items of this project: ${foreign.join(', ')}`);
}

const notFoundEntry = error('No such project, or no such changelog entry in it.');

/**
 * The changelog (issue 40, docs/api-guide.md "Changelog"): the owner writes, schedules and
 * publishes entries (admin token; team members too); readers get the published ones.
 */
export const changelogRoutes = [
  defineRoute({
    method: 'get',
    path: '/changelog',
    auth: 'clientKey',
    cors: true,
    operationId: 'listChangelog',
    tags: ['Changelog'],
    summary: 'List the published changelog',
    description:
      'The project’s published entries, newest first, for the SDK and the widget: each with its title, its sanitized HTML, its category, when it was published and the items it ships. Drafts and scheduled entries never appear.',
    query: ChangelogQuery,
    responses: {
      200: json('The published entries, newest first.', z.array(PublicChangelogEntryResponse)),
      400: error('An invalid query parameter (the reason names it).'),
      401: error('Missing or invalid API key.'),
      403: error('The project is suspended.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { query }) => {
      ctx.body = (await listPublishedEntries(sql, keyProject(ctx).id, query.limit)).map(presentPublicEntry);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/changelog',
    auth: 'projectAdmin',
    operationId: 'listProjectChangelog',
    tags: ['Changelog'],
    summary: 'List a project’s changelog entries',
    description: 'Every entry, drafts and scheduled ones included, newest first (by publication, schedule, then creation).',
    params: ProjectPath,
    responses: { 200: json('The entries.', z.array(ChangelogEntryResponse)), default: defaultError },
    handler: async (ctx, { sql }, { project }) => {
      ctx.body = (await listEntries(sql, project.id)).map(presentEntry);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/changelog',
    auth: 'projectAdmin',
    operationId: 'createChangelogEntry',
    tags: ['Changelog'],
    summary: 'Write a changelog entry',
    description: 'A draft; with `publishAt`, a scheduled entry that publishes itself then. Publish now with POST …/{entryId}/publish.',
    params: ProjectPath,
    body: body(withFieldDocs(CreateChangelogEntryBody, FIELD_DOCS), 'CreateChangelogEntryRequest'),
    responses: {
      200: json('The new entry.', ChangelogEntryResponse),
      400: error('Validation failed; the reason names the field (a linked id that is not an item of this project included).'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, body: input }) => {
      await checkLinks(sql, project.id, input.linkedFeedbackIds);
      const entry = await createEntry(sql, project.id, {
        title: input.title,
        body: input.body,
        html: renderChangelogHtml(input.body),
        category: input.category ?? null,
        linkedFeedbackIds: input.linkedFeedbackIds ?? [],
        publishAt: input.publishAt ?? null,
        completeLinked: input.completeLinked ?? false,
      });
      ctx.body = presentEntry(entry);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/changelog/:entryId',
    auth: 'projectAdmin',
    operationId: 'getChangelogEntry',
    tags: ['Changelog'],
    summary: 'Read a changelog entry',
    params: EntryPath,
    responses: { 200: json('The entry.', ChangelogEntryResponse), 404: notFoundEntry, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const entry = await findEntry(sql, project.id, params.entryId);
      if (!entry) throw notFound('changelog entry not found');
      ctx.body = presentEntry(entry);
    },
  }),
  defineRoute({
    method: 'patch',
    path: '/projects/:id/changelog/:entryId',
    auth: 'projectAdmin',
    operationId: 'updateChangelogEntry',
    tags: ['Changelog'],
    summary: 'Change a changelog entry',
    description:
      'The fields given change. `publishAt` schedules a draft or moves a schedule; null makes a scheduled entry a draft again. A published entry’s content may be corrected (readers see the correction; nobody is told again); its schedule and `completeLinked` may not change (409).',
    params: EntryPath,
    body: body(withFieldDocs(UpdateChangelogEntryBody, FIELD_DOCS), 'UpdateChangelogEntryRequest'),
    responses: {
      200: json('The entry.', ChangelogEntryResponse),
      400: error('Validation failed; the reason names the field.'),
      404: notFoundEntry,
      409: error('`publishAt` or `completeLinked` given for a published entry.'),
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params, body: input }) => {
      await checkLinks(sql, project.id, input.linkedFeedbackIds);
      const result = await updateEntry(sql, project.id, params.entryId, {
        ...input,
        ...(input.body === undefined ? {} : { html: renderChangelogHtml(input.body) }),
      });
      if (result.kind === 'not_found') throw notFound('changelog entry not found');
      if (result.kind === 'refused') throw conflict(result.reason);
      ctx.body = presentEntry(result.entry);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/projects/:id/changelog/:entryId',
    auth: 'projectAdmin',
    operationId: 'deleteChangelogEntry',
    tags: ['Changelog'],
    summary: 'Delete a changelog entry',
    description: 'Removes the entry (published ones too: they leave the board, the feed and GET /changelog). The linked items stay.',
    params: EntryPath,
    responses: { 200: json('The deleted entry.', ChangelogEntryResponse), 404: notFoundEntry, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const entry = await deleteEntry(sql, project.id, params.entryId);
      if (!entry) throw notFound('changelog entry not found');
      ctx.body = presentEntry(entry);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/projects/:id/changelog/:entryId/publish',
    auth: 'projectAdmin',
    operationId: 'publishChangelogEntry',
    tags: ['Changelog'],
    summary: 'Publish a changelog entry now',
    description:
      'A draft or a scheduled entry is published now (`published_at`), and in the same transaction announced: the workers then email the voters and submitters of the linked items who follow them (Team), one email per address, and tell the integrations (`changelog.published`, Pro and Team); see GET …/deliveries. With `completeLinked` the linked items move to `completed` too. Publishing a published entry again changes nothing, tells nobody again and answers it as it is: an entry is published once.',
    params: EntryPath,
    body: optionalBody(
      body(
        withFieldDocs(PublishChangelogEntryBody, { completeLinked: FIELD_DOCS.completeLinked }),
        'PublishChangelogEntryRequest',
        'Optional. `completeLinked` sets the entry’s flag before it is published (ignored for a published entry).',
      ),
    ),
    responses: {
      200: json('The published entry.', ChangelogEntryResponse),
      400: error('Validation failed; the reason names the field.'),
      404: notFoundEntry,
      default: defaultError,
    },
    handler: async (ctx, { sql }, { project, params, body: input }) => {
      const result = await publishEntry(sql, project.id, params.entryId, new Date(), { completeLinked: input?.completeLinked });
      if (result.kind === 'not_found') throw notFound('changelog entry not found');
      ctx.body = presentEntry(result.entry);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/projects/:id/changelog/:entryId/deliveries',
    auth: 'projectAdmin',
    operationId: 'getChangelogDeliveries',
    tags: ['Changelog'],
    summary: 'Who was told of a changelog entry',
    description:
      'Counts from the delivery log: the emails and the integration messages of the entry’s announcement, by status. The list of each delivery is GET /projects/{id}/deliveries (its `changelog_entry_id`).',
    params: EntryPath,
    responses: { 200: json('The counts.', ChangelogDeliveriesResponse), 404: notFoundEntry, default: defaultError },
    handler: async (ctx, { sql }, { project, params }) => {
      const told = await changelogDeliveries(sql, project.id, params.entryId);
      if (!told) throw notFound('changelog entry not found');
      ctx.body = presentChangelogDeliveries(params.entryId, told);
    },
  }),
];
