import { z } from 'zod';
import { bodySchema } from '../validation.js';

const trimmed = (value: unknown) => (typeof value === 'string' ? value.trim() : value);

/** POST /projects/:id/members. Trimmed before the format check; stored with its letter case. */
export const CreateMemberBody = bodySchema({
  email: z.preprocess(trimmed, z.email({ error: 'must be an email address' }).max(320, 'must be at most 320 characters')),
});
export type CreateMemberBody = z.infer<typeof CreateMemberBody>;
