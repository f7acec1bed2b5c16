import { z } from 'zod';
import { FEEDBACK_CATEGORIES, FEEDBACK_SORTS, FEEDBACK_STATUSES, OWNER_FEEDBACK_SORTS } from '../../oltp/feedback.row.js';
import { describe } from '../shared/building-blocks.js';
import { bodySchema, emailSchema, queryBoolean, userIdSchema } from '../validation.js';

const email = emailSchema;
const optionalEmail = email.nullish().transform((value) => value ?? undefined);

/** GET /feedbacks query (SPEC 4.1), before its descriptions; names read verbatim. */
const listFeedbacksFields = z.object({
  status: z.enum(FEEDBACK_STATUSES, { error: `must be one of ${FEEDBACK_STATUSES.join(', ')}` }).optional(),
  category: z.enum(FEEDBACK_CATEGORIES, { error: `must be one of ${FEEDBACK_CATEGORIES.join(', ')}` }).optional(),
  includeMerged: queryBoolean.optional().default(false),
  sort: z
    .enum(FEEDBACK_SORTS, { error: `must be one of ${FEEDBACK_SORTS.join(', ')}` })
    .optional()
    .default('votes'),
  limit: z.coerce
    .number({ error: 'must be an integer' })
    .int('must be an integer')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .optional(),
  offset: z.coerce.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must be at least 0').optional(),
});

/** Title search of the owner's list: plain text, matched as typed (wildcards are escaped by the repository). */
const titleSearch = z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters').optional();

/**
 * GET /feedbacks query (SPEC 4.1): the schema that validates it and describes it. Query parameters
 * are strings on the wire, so the default of `includeMerged` (a boolean after its transform) is
 * shown as sent (normalizeParameter).
 */
const { shape } = listFeedbacksFields;
export const ListFeedbacksQuery = listFeedbacksFields.extend({
  status: describe(shape.status, 'Only items in this status.'),
  category: describe(shape.category, 'Only items of this category.'),
  includeMerged: describe(
    shape.includeMerged,
    'Include items merged into others (`true`/`false`, also `1`/`0`). Default false: merged items are left out. Also read as `include_merged` (see the casing of query parameters in the API description).',
  ),
  sort: describe(
    shape.sort,
    '`votes` (vote count descending, the default), `newest`, `oldest`, `comments` (comment count descending). Ties by creation time, then id.',
  ),
  limit: describe(shape.limit, 'Page size, 1 to 1000. Without `limit` and `offset` every item is returned.'),
  offset: describe(shape.offset, 'Items to skip.'),
});

const TITLE_SEARCH =
  'Only items whose title contains this text, in any letter case. `%` and `_` are matched as themselves, not as wildcards. At most 200 characters; empty is no search.';

/** GET /projects/:id/feedbacks query: GET /feedbacks's parameters, a title search and the sort by voters' MRR. */
export const ProjectFeedbacksQuery = ListFeedbacksQuery.extend({
  q: describe(titleSearch, TITLE_SEARCH),
  sort: describe(
    z
      .enum(OWNER_FEEDBACK_SORTS, { error: `must be one of ${OWNER_FEEDBACK_SORTS.join(', ')}` })
      .optional()
      .default('votes'),
    '`votes` (vote count descending, the default), `newest`, `oldest`, `comments` (comment count descending), `mrr` (voters’ total MRR descending, items without one last, then votes). Ties by creation time, then id.',
  ),
});

/** GET /projects/:id/feedbacks/counts query: the list's filters other than status and paging. */
export const FeedbackCountsQuery = z.object({
  category: describe(listFeedbacksFields.shape.category, 'Only items of this category.'),
  includeMerged: describe(
    listFeedbacksFields.shape.includeMerged,
    'Count items merged into others too (`true`/`false`, also `1`/`0`). Default false, as the list.',
  ),
  q: describe(titleSearch, TITLE_SEARCH),
});

export type ProjectFeedbacksQuery = z.infer<typeof ProjectFeedbacksQuery>;
export type FeedbackCountsQuery = z.infer<typeof FeedbackCountsQuery>;

/** POST /projects/:id/feedbacks/:feedbackId/comments body: the author is the token's account or member. */
export const OwnerReplyBody = bodySchema({
  content: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 2000 characters').max(2000, 'must be 1 to 2000 characters'),
});
export type OwnerReplyBody = z.infer<typeof OwnerReplyBody>;

/** POST /feedbacks body (SPEC 4.2, 8.1). `email` is read as `userEmail` (the origin's Kotlin SDK, docs/clients.md). */
export const CreateFeedbackBody = bodySchema(
  {
    title: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 200 characters').max(200, 'must be 1 to 200 characters'),
    description: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 5000 characters').max(5000, 'must be 1 to 5000 characters'),
    category: z.enum(FEEDBACK_CATEGORIES, { error: `must be one of ${FEEDBACK_CATEGORIES.join(', ')}` }),
    userId: userIdSchema,
    userEmail: optionalEmail,
  },
  { email: 'userEmail' },
);
export type CreateFeedbackBody = z.infer<typeof CreateFeedbackBody>;

/**
 * POST /feedbacks/:id/votes body (SPEC 4.4). `notifyOnStatusChange` is read as
 * `notifyStatusChange` (the origin's Kotlin SDK, docs/clients.md); null is absent.
 */
export const AddVoteBody = bodySchema(
  {
    userId: userIdSchema,
    email: optionalEmail,
    notifyStatusChange: z.boolean({ error: 'must be a boolean' }).optional().default(false),
  },
  { notifyOnStatusChange: 'notifyStatusChange' },
);
export type AddVoteBody = z.infer<typeof AddVoteBody>;

/** DELETE /feedbacks/:id/votes body (SPEC 4.5). */
export const RemoveVoteBody = bodySchema({ userId: userIdSchema });
export type RemoveVoteBody = z.infer<typeof RemoveVoteBody>;

/**
 * DELETE /feedbacks/:id/votes query: the user, for clients that send no body (the origin's Kotlin
 * SDK sends `?user_id=…`, docs/clients.md). Read only when the body names no user.
 */
export const RemoveVoteQuery = z.object({ user_id: userIdSchema.optional() });

/** POST /feedbacks/:id/comments body (SPEC 4.7). */
export const AddCommentBody = bodySchema({
  content: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 2000 characters').max(2000, 'must be 1 to 2000 characters'),
  userId: userIdSchema,
  isAdmin: z.boolean({ error: 'must be a boolean' }).optional().default(false),
});
export type AddCommentBody = z.infer<typeof AddCommentBody>;

/** PATCH /projects/:id/feedbacks/:feedbackId body (admin). */
export const UpdateFeedbackBody = bodySchema({
  status: z.enum(FEEDBACK_STATUSES, { error: `must be one of ${FEEDBACK_STATUSES.join(', ')}` }).optional(),
  rejectionReason: z.string({ error: 'must be a string' }).max(500, 'must be at most 500 characters').nullable().optional(),
}).refine((body) => body.status !== undefined || body.rejectionReason !== undefined, {
  error: 'status or rejectionReason is required',
});
export type UpdateFeedbackBody = z.infer<typeof UpdateFeedbackBody>;

/** POST /projects/:id/feedbacks/:feedbackId/merge body (admin). */
export const MergeFeedbackBody = bodySchema({
  intoId: z.uuid({ error: 'must be a feedback id (UUID)' }),
});
export type MergeFeedbackBody = z.infer<typeof MergeFeedbackBody>;
