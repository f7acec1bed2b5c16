import { api, unwrap, type Schemas } from '../api/client';

export type Feedback = Schemas['Feedback'];

/** The API answers at most 1000 items a page (ListFeedbacksQuery.limit). */
export const FEEDBACK_PAGE_LIMIT = 1000;

/**
 * A project's feedback through the admin route, merged items included: the inbox counts per
 * status and filters by title from one answer (the API has neither counts nor a title search).
 */
export function loadFeedback(projectId: string, options: { category?: string; sort: 'votes' | 'newest' }): Promise<Feedback[]> {
  const category = options.category as Schemas['Feedback']['category'] | undefined;
  return unwrap(
    api.GET('/projects/{id}/feedbacks', {
      params: {
        path: { id: projectId },
        query: { includeMerged: 'true', sort: options.sort, limit: FEEDBACK_PAGE_LIMIT, ...(category ? { category } : {}) },
      },
    }),
  );
}
