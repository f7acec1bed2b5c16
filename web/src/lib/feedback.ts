import { api, type Schemas, unwrap } from '../api/client';
import type { operations } from '../api/schema';

export type Feedback = Schemas['Feedback'];
export type StatusCounts = Schemas['FeedbackStatusCounts'];
type Query = NonNullable<operations['listProjectFeedbacks']['parameters']['query']>;
export type FeedbackSort = NonNullable<Query['sort']>;
export type FeedbackFilters = {
  status?: Feedback['status'] | undefined;
  category?: Feedback['category'] | undefined;
  q?: string | undefined;
  includeMerged?: boolean | undefined;
};

/** The API answers at most 1000 items a page (ListFeedbacksQuery.limit). */
export const FEEDBACK_PAGE_LIMIT = 1000;

/** The filters as query parameters: only those set, so the URL of the call stays short. */
function filterQuery(filters: FeedbackFilters) {
  return {
    ...(filters.category ? { category: filters.category } : {}),
    ...(filters.q?.trim() ? { q: filters.q.trim() } : {}),
    ...(filters.includeMerged ? { includeMerged: 'true' as const } : {}),
  };
}

/** One page of a project's feedback, filtered, searched and sorted by the API. */
export function loadFeedback(projectId: string, options: FeedbackFilters & { sort: FeedbackSort; limit?: number }): Promise<Feedback[]> {
  return unwrap(
    api.GET('/projects/{id}/feedbacks', {
      params: {
        path: { id: projectId },
        query: {
          ...filterQuery(options),
          ...(options.status ? { status: options.status } : {}),
          sort: options.sort,
          limit: options.limit ?? FEEDBACK_PAGE_LIMIT,
        },
      },
    }),
  );
}

/** Items per status under the same filters (status aside), for the inbox's tabs. */
export function loadStatusCounts(projectId: string, filters: FeedbackFilters): Promise<StatusCounts> {
  return unwrap(api.GET('/projects/{id}/feedbacks/counts', { params: { path: { id: projectId }, query: filterQuery(filters) } }));
}

/** One item of the project, merged ones included. */
export function loadFeedbackItem(projectId: string, feedbackId: string): Promise<Feedback> {
  return unwrap(api.GET('/projects/{id}/feedbacks/{feedbackId}', { params: { path: { id: projectId, feedbackId } } }));
}
