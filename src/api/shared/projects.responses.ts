import { z } from 'zod';
import type { presentProject } from './projects.presenter.js';
import { timestamp, uuid } from './response-fields.js';
import type { Expect, Out, SameShape } from './shape-checks.js';

// Projects of an account (DESIGN 3)

const projectFields = {
  id: uuid,
  name: z.string(),
  archived: z.boolean().meta({ description: 'Archived projects are read-only for feedback.' }),
  suspended: z.boolean().meta({ description: 'Set by the operator; a suspended project’s API key gets 403.' }),
  allowed_origins: z.array(z.string()).meta({
    description:
      'Browser origins the API key may be used from (exact, e.g. `https://app.example.com`). Empty: any origin. A key-authenticated request with an `Origin` header not listed here is refused with 403; requests without `Origin` (servers, mobile apps) are not affected.',
  }),
  publishable_key: z.string().meta({
    description:
      'The key made for web pages (`pk_…`): the widget and the public board. It reads feedback, tracks events, and acts for a user only with a signed `X-User-Token` (or anonymously where allowed); it never reads metrics or sets MRR. Public by design. Rotate with POST /projects/{id}/publishable-key.',
  }),
  has_identity_secret: z.boolean().meta({
    description: 'Whether an identity secret exists (POST /projects/{id}/identity-secret); the secret itself is shown only when created.',
  }),
  require_signed_identity: z.boolean().meta({
    description:
      'When true, every request that acts as a user (create, vote, unvote, comment, register) needs a valid `X-User-Token`, with either key.',
  }),
  board_public: z.boolean().meta({ description: 'When true, the public board is served at `/board/{slug}`.' }),
  anonymous_feedback: z.boolean().meta({
    description:
      'When true, board visitors may vote, comment and submit without a token (rate-limited per IP; submissions wait for approval).',
  }),
  slug: z.string().meta({ description: 'The public board’s address: `/board/{slug}`.' }),
  session_timeout_minutes: z.number().int().min(1).max(1440).meta({
    description:
      'Minutes, 1 to 1440 (default 30): a gap between two consecutive events of a user longer than this starts a new session; a gap of exactly this long does not (docs/sessions.md). Set with PATCH /projects/{id}; the session measures and the user timeline apply it to every window, past ones too.',
  }),
  created_at: timestamp,
  updated_at: timestamp,
};

export const ProjectResponse = z.object(projectFields).meta({ id: 'Project', description: 'A project, without its API key.' });

export const ProjectWithApiKeyResponse = z
  .object({
    ...projectFields,
    api_key: z.string().meta({ description: 'The project API key (`X-API-Key`). Shown only here: it is stored as a hash.' }),
  })
  .meta({ id: 'ProjectWithApiKey', description: 'A project with its new API key, answered when the key is created or rotated.' });

export type ProjectResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentProject>, Out<typeof ProjectResponse> | Out<typeof ProjectWithApiKeyResponse>>>,
];
