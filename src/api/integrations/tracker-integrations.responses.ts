import { z } from 'zod';
import { TRACKER_KINDS } from '../../core/trackers.js';
import { FEEDBACK_STATUSES } from '../../oltp/feedback.row.js';
import { INTEGRATION_EVENTS } from '../../oltp/integrations.repo.js';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentTrackerIntegration } from './tracker-integrations.presenter.js';

const status = z.enum(FEEDBACK_STATUSES);

export const StatusMapResponse = z
  .object({
    out: z.record(status, z.string()).meta({ description: 'Our status → the state it puts the issue in.' }),
    in: z.record(z.string(), status).meta({ description: 'The tracker’s state → our status; a state not listed is unmapped.' }),
    labels: z
      .record(status, z.string().nullable())
      .nullable()
      .meta({ description: 'GitHub: the label each status puts on the issue (null: none); Linear: null.' }),
  })
  .meta({ id: 'StatusMap', description: 'How the tracker’s states and our statuses correspond (docs/integrations.md, “Status maps”).' });

const trackerFields = {
  id: uuid,
  project_id: uuid,
  kind: z.enum(TRACKER_KINDS).meta({ description: 'GitHub Issues or Linear. Cannot be changed.' }),
  url: z.string().meta({ description: 'For a tracker: its API address, as `api_url`.' }),
  events: z
    .array(z.enum(INTEGRATION_EVENTS))
    .length(0)
    .meta({ description: 'Always empty: a tracker takes no notification messages; it follows its linked items (docs/integrations.md).' }),
  enabled: z.boolean().meta({ description: 'A disabled tracker is not called, and its webhooks change nothing.' }),
  has_secret: z.boolean().meta({ description: 'Always true: a tracker has a webhook secret. It is never returned after creation.' }),
  api_url: z.string().meta({ description: 'The tracker’s API address.' }),
  repository: z.string().nullable().meta({ description: 'GitHub: the repository new issues go to (`owner/name`); null for Linear.' }),
  team_id: z.string().nullable().meta({ description: 'Linear: the team new issues go to; null for GitHub.' }),
  linear_project_id: z.string().nullable().meta({ description: 'Linear: the project new issues go into, or null.' }),
  status_map: StatusMapResponse,
  auto_create: z.boolean().meta({
    description: 'Every new item of the project gets its issue here by itself, in the background (its delivery in the delivery log).',
  }),
  webhook_url: z.string().meta({ description: 'The address to paste into the tracker’s webhook settings (it names this integration).' }),
  has_token: z.boolean().meta({ description: 'Always true: the token is stored sealed and never returned.' }),
  needs_attention: z.string().nullable().meta({
    description:
      'Why calls stopped: the tracker refused the token (401) or a permission (403). Null while it works; a new `token` clears it.',
  }),
  needs_attention_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
};

export const TrackerIntegrationResponse = z.object(trackerFields).meta({
  id: 'TrackerIntegration',
  description: 'A GitHub or Linear integration (Pro and Team plans), without its token and webhook secret.',
});

export const TrackerIntegrationWithSecretResponse = z
  .object({
    ...trackerFields,
    webhook_secret: z.string().meta({
      description:
        'The webhook secret the server generated (`whsec_…`), for a tracker created without one: paste it into the tracker with `webhook_url`. Shown only here.',
    }),
  })
  .meta({
    id: 'TrackerIntegrationWithSecret',
    description: 'A new tracker integration with the webhook secret the server generated for it.',
  });

export type TrackerIntegrationResponseChecks = [
  Expect<
    SameShape<
      ReturnType<typeof presentTrackerIntegration>,
      Out<typeof TrackerIntegrationResponse> | Out<typeof TrackerIntegrationWithSecretResponse>
    >
  >,
];
