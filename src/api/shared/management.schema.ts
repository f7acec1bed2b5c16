import { z } from 'zod';
import { PLANS } from '../../core/plans.js';
import { DEAD_LETTER_KINDS } from '../../oltp/dead-letters.repo.js';
import { allowedOrigins } from '../cors/allowed-origins.schema.js';
import { bodySchema } from '../validation.js';
import { pageQueryFields } from './building-blocks.js';

const plan = z.enum(PLANS, { error: `must be one of ${PLANS.join(', ')}` });
const projectName = z
  .string({ error: 'must be a string' })
  .trim()
  .min(1, 'must be 1 to 200 characters')
  .max(200, 'must be 1 to 200 characters');

/** POST /admin/accounts (operator). */
export const CreateAccountBody = bodySchema({
  email: z
    .email({ error: 'must be an email address' })
    .max(320, 'must be at most 320 characters')
    .transform((e) => e.toLowerCase()),
  plan: plan.optional().default('free'),
});
export type CreateAccountBody = z.infer<typeof CreateAccountBody>;

/** PATCH /admin/accounts/:id (operator). */
export const UpdateAccountBody = bodySchema({ plan });
export type UpdateAccountBody = z.infer<typeof UpdateAccountBody>;

/** PATCH /admin/projects/:id (operator). */
export const SuspendProjectBody = bodySchema({ suspended: z.boolean({ error: 'must be a boolean' }) });
export type SuspendProjectBody = z.infer<typeof SuspendProjectBody>;

/** POST /projects (account admin). */
export const CreateProjectBody = bodySchema({ name: projectName });
export type CreateProjectBody = z.infer<typeof CreateProjectBody>;

/** PATCH /projects/:id (account admin). */
export const UpdateProjectBody = bodySchema({
  name: projectName.optional(),
  archived: z.boolean({ error: 'must be a boolean' }).optional(),
  requireSignedIdentity: z.boolean({ error: 'must be a boolean' }).optional(),
  boardPublic: z.boolean({ error: 'must be a boolean' }).optional(),
  anonymousFeedback: z.boolean({ error: 'must be a boolean' }).optional(),
  allowedOrigins: allowedOrigins.optional(),
  sessionTimeoutMinutes: z
    .number({ error: 'must be an integer from 1 to 1440' })
    .int('must be an integer from 1 to 1440')
    .min(1, 'must be an integer from 1 to 1440')
    .max(1440, 'must be an integer from 1 to 1440')
    .optional()
    .meta({ description: 'Minutes of inactivity after which a user’s next event starts a new session (docs/sessions.md).' }),
}).refine((body) => Object.values(body).some((value) => value !== undefined), {
  error:
    'at least one of name, archived, allowedOrigins, requireSignedIdentity, boardPublic, anonymousFeedback, sessionTimeoutMinutes is required',
});
export type UpdateProjectBody = z.infer<typeof UpdateProjectBody>;

/** GET /admin/dead-letters query (operator), read verbatim. */
export const ListDeadLettersQuery = z.object({
  kind: z.enum(DEAD_LETTER_KINDS, { error: `must be one of ${DEAD_LETTER_KINDS.join(', ')}` }).optional(),
  project_id: z.uuid({ error: 'must be a project id (UUID)' }).optional(),
  ...pageQueryFields,
});
export type ListDeadLettersQuery = z.infer<typeof ListDeadLettersQuery>;
