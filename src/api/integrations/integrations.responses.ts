import { z } from 'zod';
import { INTEGRATION_EVENTS, MESSAGE_KINDS } from '../../oltp/integrations.repo.js';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentIntegration } from './integrations.presenter.js';

// Integrations of a project (SPEC 8.2)

const integrationFields = {
  id: uuid,
  project_id: uuid,
  kind: z.enum(MESSAGE_KINDS).meta({ description: 'Slack or Discord incoming webhook, or a generic signed webhook. Cannot be changed.' }),
  url: z.string().meta({ description: 'Absolute http or https URL the notifications are posted to.' }),
  events: z
    .array(z.enum(INTEGRATION_EVENTS))
    .nullable()
    .meta({ description: 'The notification types it receives; null: all of them, also types added later.' }),
  enabled: z.boolean().meta({ description: 'A disabled integration receives nothing.' }),
  has_secret: z
    .boolean()
    .meta({ description: 'Whether a signing secret is set (always true for a webhook). The secret itself is never returned.' }),
  created_at: timestamp,
  updated_at: timestamp,
};

export const IntegrationResponse = z
  .object(integrationFields)
  .meta({ id: 'Integration', description: 'An integration of a project (Pro and Team plans), without its secret.' });

export const IntegrationWithSecretResponse = z
  .object({
    ...integrationFields,
    secret: z.string().meta({
      description: 'The signing secret the server generated (`whsec_…`), for a webhook created without one. Shown only here.',
    }),
  })
  .meta({ id: 'IntegrationWithSecret', description: 'A new webhook integration with the secret the server generated for it.' });

export type IntegrationResponseChecks = [
  Expect<SameShape<ReturnType<typeof presentIntegration>, Out<typeof IntegrationResponse> | Out<typeof IntegrationWithSecretResponse>>>,
];
