import { z } from 'zod';
import { bodySchema } from './validation.js';

/** POST /projects/:id/members. Trimmed before the format check; stored with its letter case. */
export const CreateMemberBody = bodySchema({
  email: z
    .string({ error: 'must be a string' })
    .trim()
    .pipe(z.email({ error: 'must be an email address' }).max(320, 'must be at most 320 characters')),
});
export type CreateMemberBody = z.infer<typeof CreateMemberBody>;
