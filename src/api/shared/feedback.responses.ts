import { z } from 'zod';
import { FEEDBACK_CATEGORIES, FEEDBACK_STATUSES } from '../../oltp/feedback.row.js';
import type { presentComment, presentFeedback, presentStatusCounts, presentVote, presentVoters } from './feedback.presenter.js';
import { count, timestamp, uuid } from './response-fields.js';
import type { Expect, Out, SameShape } from './shape-checks.js';

// Feedback, votes, comments (SPEC 2.1 to 2.5)

export const FeedbackResponse = z
  .object({
    id: uuid,
    title: z.string(),
    description: z.string(),
    status: z.enum(FEEDBACK_STATUSES),
    category: z.enum(FEEDBACK_CATEGORIES),
    user_id: z.string().meta({
      description:
        'The submitter (the client app’s user id). On the client routes, an anonymous board visitor’s `anon-…` id is shown as a `visitor-…` alias to everyone but that visitor (docs/widget.md).',
    }),
    user_email: z.string().nullable().meta({ description: 'Email of the submitter, when one was given.' }),
    vote_count: count,
    has_voted: z.boolean().meta({ description: 'True only when the `X-User-Id` request header names a user who has voted.' }),
    comment_count: count,
    total_mrr: z.number().nullable().meta({ description: 'Combined MRR of all voters, when tracked.' }),
    created_at: timestamp,
    updated_at: timestamp,
    rejection_reason: z.string().max(500).nullable(),
    merged_into_id: uuid.nullable().meta({ description: 'The feedback this item was merged into.' }),
    merged_at: timestamp.nullable(),
    merged_feedback_ids: z.array(uuid).nullable().meta({ description: 'The feedback items merged into this one.' }),
  })
  .meta({ id: 'Feedback', description: 'A feedback item (SPEC 2.1).' });

export const VoteResponse = z
  .object({
    feedback_id: uuid,
    vote_count: count.meta({ description: 'The count after the action.' }),
    has_voted: z.boolean().meta({ description: 'Whether the user has a vote after the action.' }),
    success: z.literal(true).meta({
      description: 'Always true. Not in SPEC 2.4: the origin project’s Kotlin SDK requires it (docs/clients.md).',
    }),
  })
  .meta({ id: 'Vote', description: 'The vote state after adding or removing a vote (SPEC 2.4).' });

export const CommentResponse = z
  .object({
    id: uuid,
    feedback_id: uuid.meta({
      description: 'The item the comment is on. Not in SPEC 2.5: the origin project’s Kotlin SDK requires it (docs/clients.md).',
    }),
    content: z.string(),
    user_id: z.string().meta({
      description:
        'The author (the client app’s user id). An anonymous board visitor’s `anon-…` id is shown as a `visitor-…` alias to everyone but that visitor (docs/widget.md).',
    }),
    is_admin: z.boolean(),
    created_at: timestamp,
  })
  .meta({ id: 'Comment', description: 'A comment (SPEC 2.5).' });

// The owner's views of an item (admin token)

const mrr = z.number().nullable();

export const VotersResponse = z
  .object({
    feedback_id: uuid,
    total_mrr: mrr.meta({ description: 'Combined MRR of the voters who have one; null when none has. The item’s `total_mrr`.' }),
    voters: z.array(
      z
        .object({
          user_id: z.string().meta({ description: 'The voter (the client app’s user id).' }),
          email: z
            .string()
            .nullable()
            .meta({ description: 'The email the voter gave with the vote (or the submitter with the item), if any.' }),
          mrr: mrr.meta({ description: 'The voter’s current MRR (POST /users/register); null when unknown.' }),
          created_at: timestamp.meta({ description: 'When the vote was cast.' }),
        })
        .meta({ id: 'Voter' }),
    ),
  })
  .meta({ id: 'Voters', description: 'The voters of a feedback item, highest MRR first (unknown MRR last), then oldest vote.' });

const statusCount = count.meta({ description: 'Items in this status.' });

export const StatusCountsResponse = z
  .object({
    total: count.meta({ description: 'Items counted, every status.' }),
    by_status: z.object({
      pending: statusCount,
      approved: statusCount,
      in_progress: statusCount,
      testflight: statusCount,
      completed: statusCount,
      rejected: statusCount,
    }),
  })
  .meta({ id: 'FeedbackStatusCounts', description: 'How many items are in each status, every status present (0 when none).' });

export type FeedbackResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentVoters>, Out<typeof VotersResponse>>>,
  Expect<SameShape<ReturnType<typeof presentStatusCounts>, Out<typeof StatusCountsResponse>>>,
  Expect<SameShape<ReturnType<typeof presentFeedback>, Out<typeof FeedbackResponse>>>,
  Expect<SameShape<ReturnType<typeof presentVote>, Out<typeof VoteResponse>>>,
  Expect<SameShape<ReturnType<typeof presentComment>, Out<typeof CommentResponse>>>,
];
