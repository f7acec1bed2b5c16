/*
 * The request and response types of the calls the SDK makes, taken from the types generated from
 * the service's OpenAPI document (scripts/generate-api-types.ts): a change to the document that
 * breaks a call breaks the SDK's build.
 */
import type { components, operations } from './generated/openapi.js';

type Schemas = components['schemas'];
type JsonBody<T> = T extends { content: { 'application/json': infer Body } } ? Body : never;
type RequestBody<Op> = Op extends { requestBody?: infer Body } ? JsonBody<NonNullable<Body>> : never;
type Ok<Op> = Op extends { responses: { 200: infer Response } } ? JsonBody<Response> : never;

/** A feedback item (SPEC 2.1). */
export type Feedback = Ok<operations['getFeedback']>;
/** The vote state after a vote or an unvote (SPEC 2.4). */
export type Vote = Ok<operations['addVote']>;
/** A comment (SPEC 2.5). */
export type Comment = Ok<operations['addComment']>;
/** An SDK user (SPEC 2.6). */
export type SdkUser = Ok<operations['registerSdkUser']>;
/** A tracked event as stored (SPEC 2.7). */
export type TrackedEvent = Ok<operations['trackEvent']>;

export type FeedbackStatus = Feedback['status'];
export type FeedbackCategory = Feedback['category'];

/** Filters and order of GET /feedbacks (SPEC 4.1). */
export type ListFeedbackQuery = Omit<NonNullable<operations['listFeedbacks']['parameters']['query']>, 'includeMerged'> & {
  includeMerged?: boolean;
};
export type CreateFeedbackBody = RequestBody<operations['createFeedback']>;
export type VoteBody = RequestBody<operations['addVote']>;
export type UnvoteBody = RequestBody<operations['removeVote']>;
export type CommentBody = RequestBody<operations['addComment']>;
export type RegisterUserBody = RequestBody<operations['registerSdkUser']>;
export type TrackEventBody = RequestBody<operations['trackEvent']>;

/** The server-wide error body (SPEC 7.1): `{ error: true, reason }`. */
export type ServerErrorBody = Schemas['Error'];
/** The metrics API's error body (SPEC 7.2): `{ error: { code, message } }`. */
export type MetricsErrorBody = Schemas['MetricsError'];

/** The answer of POST /events/batch: counts, and what became of each event in the order sent. */
export type BatchResult = Ok<operations['trackEventBatch']>;
/** What became of one event of a batch: accepted, duplicate (with the first stored copy) or rejected (with the reason). */
export type BatchEventResult = BatchResult['results'][number];
