import { z } from 'zod';
import { apiTime } from '../../core/time.js';
import { FEEDBACK_STATUSES } from '../../oltp/feedback.row.js';
import type { SimilarFeedbackRow } from '../../oltp/similar-feedback.repo.js';
import { describe } from '../shared/building-blocks.js';
import { count, timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';

/** GET /feedbacks/similar query: what the user has typed so far. */
export const SimilarFeedbacksQuery = z.object({
  q: describe(
    z.string({ error: 'q: is required' }).max(500, 'must be at most 500 characters'),
    'The text to match, usually the title being typed. Shorter than 3 characters (after trimming): an empty list. At most 500 characters.',
  ),
});
export type SimilarFeedbacksQuery = z.infer<typeof SimilarFeedbacksQuery>;

export const SimilarFeedbackResponse = z
  .object({
    id: uuid,
    title: z.string(),
    status: z.enum(FEEDBACK_STATUSES),
    vote_count: count,
    created_at: timestamp.meta({ description: 'When the item was filed: the older of two duplicates is the one to keep.' }),
    score: z.number().min(0).max(1).meta({
      description:
        'How alike, 0 to 1: the better of the title’s trigram similarity and a blend of it with the full-text rank (title words weigh most). From 0.45 the dashboard’s inbox marks a likely duplicate.',
    }),
  })
  .meta({ id: 'SimilarFeedback', description: 'An item that resembles the text, with how alike they are.' });

/** The answer of both similar routes: the fields a "vote for this instead" list shows. */
export function presentSimilar(row: SimilarFeedbackRow) {
  return {
    id: row.id,
    title: row.title,
    status: row.status,
    vote_count: row.vote_count,
    created_at: apiTime(row.created_at),
    score: Math.round(row.score * 1000) / 1000,
  };
}

export type SimilarShapeChecks = [Expect<SameShape<ReturnType<typeof presentSimilar>, Out<typeof SimilarFeedbackResponse>>>];
