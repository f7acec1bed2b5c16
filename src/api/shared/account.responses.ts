import { z } from 'zod';
import { PLANS } from '../../core/plans.js';
import { DEAD_LETTER_KINDS } from '../../oltp/dead-letters.repo.js';
import type { presentAccount, presentDeadLetters } from './account.presenter.js';
import { count, timestamp, uuid } from './response-fields.js';
import type { Expect, Out, SameShape } from './shape-checks.js';

// The operator's routes: accounts and dead letters (DESIGN 3)

const accountFields = {
  id: uuid,
  email: z.string().meta({ description: 'Lower-cased email address.' }),
  plan: z.enum(PLANS),
  created_at: timestamp,
  updated_at: timestamp,
};

export const AccountResponse = z.object(accountFields).meta({ id: 'Account', description: 'An account, without its admin token.' });

export const AccountWithAdminTokenResponse = z
  .object({
    ...accountFields,
    admin_token: z.string().meta({ description: 'The account’s admin bearer token. Shown only here: it is stored as a hash.' }),
  })
  .meta({ id: 'AccountWithAdminToken', description: 'A new account with its admin token.' });

export const DeadLettersResponse = z
  .object({
    total: count.meta({ description: 'Dead letters matching the filter, on every page.' }),
    limit: count,
    offset: count,
    dead_letters: z.array(
      z
        .object({
          id: z.string().meta({ description: 'Dead letter id (an integer, as a string).' }),
          kind: z.enum(DEAD_LETTER_KINDS).meta({ description: '`event` (table events) or `fact` (table facts).' }),
          project_id: uuid.nullable().meta({ description: 'Project of the row; null only when the row’s own project id is not a UUID.' }),
          row_key: z
            .string()
            .meta({ description: 'The row’s identity: `<project id>:<event id>` for an event, the outbox id for a fact.' }),
          payload: z
            .string()
            .meta({ description: 'The row as it was sent to ClickHouse, as JSON text (NUL and lone surrogates stay escaped).' }),
          error_code: z.string().meta({ description: 'ClickHouse error code, e.g. `117`.' }),
          error_name: z.string().meta({ description: 'ClickHouse error name, e.g. `INCORRECT_DATA`.' }),
          error: z.string().meta({ description: 'ClickHouse’s message.' }),
          created_at: timestamp,
        })
        .meta({ id: 'DeadLetter', description: 'A row ClickHouse refused for its data, isolated from its batch.' }),
    ),
  })
  .meta({ id: 'DeadLetters' });

export type OperatorResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentAccount>, Out<typeof AccountResponse> | Out<typeof AccountWithAdminTokenResponse>>>,
  Expect<SameShape<ReturnType<typeof presentDeadLetters>, Out<typeof DeadLettersResponse>>>,
];
