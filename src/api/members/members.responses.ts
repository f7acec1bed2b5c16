import { z } from 'zod';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentMember } from './members.presenter.js';

// Team members of a project (SPEC 8.2)

const memberFields = {
  id: uuid,
  project_id: uuid,
  email: z.string().meta({ description: 'As sent (trimmed); unique per project whatever its letter case.' }),
  created_at: timestamp,
};

export const MemberResponse = z
  .object(memberFields)
  .meta({ id: 'Member', description: 'A team member of a project (Team plan), without its token.' });

export const MemberWithAdminTokenResponse = z
  .object({
    ...memberFields,
    admin_token: z.string().meta({
      description:
        'The member’s own admin bearer token of the project’s account: it acts as the account on every `/projects…` route, while the plan is Team. Shown only here: it is stored as a hash. Removing the member revokes it.',
    }),
  })
  .meta({ id: 'MemberWithAdminToken', description: 'A new team member with its admin token.' });

export type MemberResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentMember>, Out<typeof MemberResponse> | Out<typeof MemberWithAdminTokenResponse>>>,
];
