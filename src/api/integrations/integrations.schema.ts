import { z } from 'zod';
import { INTEGRATION_EVENTS, INTEGRATION_KINDS } from '../../oltp/integrations.repo.js';
import { badRequest } from '../errors.js';
import { describe, projectId } from '../shared/building-blocks.js';
import { bodySchema } from '../validation.js';
import { trackerFields } from './tracker-integrations.schema.js';

export const MAX_URL_LENGTH = 2048;
export const SECRET_LENGTH = { min: 16, max: 256 } as const;

/** An absolute http(s) URL: no other scheme (javascript:, ftp:, file:), nothing relative. */
const url = z
  .url({ protocol: z.regexes.httpProtocol, error: 'must be an absolute http or https URL' })
  .max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`);

const secret = z
  .string({ error: 'must be a string' })
  .min(SECRET_LENGTH.min, `must be ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters`)
  .max(SECRET_LENGTH.max, `must be ${SECRET_LENGTH.min} to ${SECRET_LENGTH.max} characters`);

/** A non-empty set of notification types; null means all of them (also those added later). */
const events = z
  .array(z.enum(INTEGRATION_EVENTS, { error: `must be one of ${INTEGRATION_EVENTS.join(', ')}` }), {
    error: 'must be an array of notification types, or null',
  })
  .min(1, 'must not be empty (null means every type)')
  .refine((list) => new Set(list).size === list.length, 'must not repeat a type')
  .nullable();

const enabled = z.boolean({ error: 'must be a boolean' });

/** POST /projects/:id/integrations. `url` is required of the message kinds; trackers take theirs from `apiUrl`. */
export const CreateIntegrationBody = bodySchema({
  kind: z.enum(INTEGRATION_KINDS, { error: `must be one of ${INTEGRATION_KINDS.join(', ')}` }),
  url: url.optional(),
  secret: secret.optional(),
  events: events.optional().transform((value) => value ?? null),
  enabled: enabled.optional().default(true),
  ...trackerFields,
});
export type CreateIntegrationBody = z.infer<typeof CreateIntegrationBody>;

/** PATCH /projects/:id/integrations/:integrationId: the fields to change. */
export const UpdateIntegrationBody = bodySchema(
  {
    url: url.optional(),
    secret: secret.optional(),
    events: events.optional(),
    enabled: enabled.optional(),
    ...trackerFields,
  },
  undefined,
  (body) => {
    if (body !== null && typeof body === 'object' && Object.hasOwn(body, 'kind')) {
      throw badRequest('kind: cannot be changed (delete the integration and create another)');
    }
  },
).refine((body) => Object.values(body).some((value) => value !== undefined), {
  error:
    'url, secret, events or enabled is required (for a tracker: token, apiUrl, repository, teamId, linearProjectId, statusMap, webhookSecret, autoCreate or enabled)',
});
export type UpdateIntegrationBody = z.infer<typeof UpdateIntegrationBody>;

/** The path of one integration: /projects/:id/integrations/:integrationId. */
export const ProjectIntegrationPath = z.object({
  id: projectId,
  integrationId: describe(
    z.uuid({ error: 'integration not found' }),
    'Integration id. 404 when it is not an integration of this project (a malformed id too).',
  ),
});
