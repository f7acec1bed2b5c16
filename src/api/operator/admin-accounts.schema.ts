import { z } from 'zod';
import { bodySchema } from '../validation.js';

/** GET /admin/accounts: one account by email, or a page of all of them. */
export const ListAccountsQuery = z.object({
  email: z
    .string()
    .trim()
    .min(3, 'must be an email address')
    .max(320, 'must be at most 320 characters')
    .transform((email) => email.toLowerCase())
    .optional(),
  limit: z.coerce
    .number({ error: 'must be an integer from 1 to 500' })
    .int('must be an integer from 1 to 500')
    .min(1, 'must be an integer from 1 to 500')
    .max(500, 'must be an integer from 1 to 500')
    .default(50),
  cursor: z.string().min(1, 'must not be empty').max(200, 'must be at most 200 characters').optional(),
});
export type ListAccountsQuery = z.infer<typeof ListAccountsQuery>;

/** POST /admin/accounts/:id/tokens. */
export const IssueAdminTokenBody = bodySchema({
  revokeOthers: z.boolean({ error: 'must be a boolean' }).optional().default(false),
});
export type IssueAdminTokenBody = z.infer<typeof IssueAdminTokenBody>;
