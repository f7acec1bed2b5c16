import { z } from 'zod';
import { describe } from '../shared/building-blocks.js';

/** DELETE /projects/:id: the project's name, as a typed confirmation. */
export const DeleteProjectQuery = z.object({
  confirm: describe(
    z.string({ error: 'is required: the project’s name, to confirm the deletion' }).min(1, 'must be the project’s name'),
    'The project’s name, exactly: a typed confirmation. Required.',
  ),
});
export type DeleteProjectQuery = z.infer<typeof DeleteProjectQuery>;
