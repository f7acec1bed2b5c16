import { z } from 'zod';
import { PLANS } from '../../core/plans.js';
import { PROJECT_DELETION_STEPS } from '../../oltp/deletions.repo.js';
import { ERASURE_STEPS, JOB_STATUSES } from '../../oltp/erasures.repo.js';
import type { presentAccountSummary } from './account.presenter.js';
import { AccountResponse } from './account.responses.js';
import { defaultError, error } from './building-blocks.js';
import type { presentErasure, presentProjectDeletion } from './data-rights.presenter.js';
import { count, timestamp, uuid } from './response-fields.js';

/*
 * Response bodies of the data-rights routes (docs/data-rights.md), described like those of
 * the other *.responses.ts, with the same compile-time check against the code that builds them.
 */

const jobStatus = z.enum(JOB_STATUSES).meta({
  description: '`pending` (not started), `running`, `done`, or `failed` (gave up after repeated errors; `last_error` says why).',
});

export const ErasureResponse = z
  .object({
    id: uuid,
    project_id: uuid,
    user_id: z
      .string()
      .nullable()
      .meta({ description: 'The erased user id while the erasure runs; null once it is done (the record keeps no trace of it).' }),
    status: jobStatus,
    step: z.enum(ERASURE_STEPS).meta({ description: 'The next step to run (`done` at the end); docs/data-rights.md lists them.' }),
    summary: z
      .object({
        votes_deleted: count.optional(),
        feedbacks_anonymized: count.optional(),
        comments_anonymized: count.optional(),
        sdk_user_deleted: z.boolean().optional(),
        deliveries_deleted: count.optional(),
        notifications_scrubbed: count.optional(),
        event_days: count.optional().meta({ description: 'UTC days that held the user’s events (their rollups are rebuilt).' }),
      })
      .meta({ description: 'What the steps done so far changed (counts only).' }),
    attempts: count.meta({ description: 'Failed attempts of the current step.' }),
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'Erasure', description: 'The erasure of one SDK user’s data, a durable job.' });

export const ProjectDeletionResponse = z
  .object({
    id: uuid,
    project_id: uuid,
    project_name: z.string(),
    status: jobStatus,
    step: z.enum(PROJECT_DELETION_STEPS).meta({
      description:
        '`settle` (waiting for the project’s last facts and events to reach ClickHouse), `clickhouse` (deleting its rows there), `done`.',
    }),
    attempts: count,
    last_error: z.string().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({
    id: 'ProjectDeletion',
    description: 'A deleted project: everything of it in PostgreSQL is gone when this is answered; its ClickHouse rows follow (the job).',
  });

const accountSummaryFields = {
  id: uuid,
  email: z.string(),
  plan: z.enum(PLANS),
  created_at: timestamp,
  updated_at: timestamp,
  project_count: count,
  admin_token_count: count.meta({ description: 'Owner admin tokens (team members’ own tokens not counted).' }),
};

export const AccountSummaryResponse = z
  .object(accountSummaryFields)
  .meta({ id: 'AccountSummary', description: 'An account as the operator lists it.' });

export const AccountListResponse = z
  .object({
    accounts: z.array(AccountSummaryResponse),
    next_cursor: z
      .string()
      .nullable()
      .meta({ description: 'Pass as `cursor` for the next page; null on the last page (and with `email`).' }),
  })
  .meta({ id: 'AccountList' });

export const IssuedAdminTokenResponse = AccountResponse.extend({
  admin_token: z.string().meta({ description: 'The new admin token. Shown only here: it is stored as a hash.' }),
  revoked_tokens: count.meta({ description: 'Owner tokens revoked by this request (0 unless `revokeOthers`).' }),
}).meta({ id: 'IssuedAdminToken', description: 'The account with its new admin token.' });

/** The refusals the data-rights routes (exports, erasure, deletions) document in common. */
export const dataRightsErrors = {
  // The same refusals as every other route (a string a store cannot hold, 413, 415 included).
  default: defaultError,
  unauthorized: error('Missing or invalid admin token.'),
  noProject: error('No such project.'),
  otherAccount: error('The project belongs to another account, or is suspended.'),
};

// Compile-time guards, as in the other *.responses.ts.
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;
type Out<S extends z.ZodType> = z.output<S>;

export type DataTeamsResponseShapeChecks = [
  Expect<Mutual<ReturnType<typeof presentErasure>, Out<typeof ErasureResponse>>>,
  Expect<Mutual<ReturnType<typeof presentProjectDeletion>, Out<typeof ProjectDeletionResponse>>>,
  Expect<Mutual<ReturnType<typeof presentAccountSummary>, Out<typeof AccountSummaryResponse>>>,
];
