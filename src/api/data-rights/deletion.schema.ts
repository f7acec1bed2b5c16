import { z } from 'zod';

/** DELETE /projects/:id: the project's name, as a typed confirmation. */
export const DeleteProjectQuery = z.object({
  confirm: z.string({ error: 'is required: the project’s name, to confirm the deletion' }).min(1, 'must be the project’s name'),
});
export type DeleteProjectQuery = z.infer<typeof DeleteProjectQuery>;
