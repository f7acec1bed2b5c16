import { z } from 'zod';
import { REPOSITORY_PATTERN } from '../../core/trackers.js';
import { FEEDBACK_STATUSES } from '../../oltp/feedback.row.js';

/*
 * The request fields of tracker integrations (kind `github` or `linear`, docs/integrations.md),
 * which CreateIntegrationBody and UpdateIntegrationBody take beside the fields of the other kinds.
 * Which kind may send which field is checked by tracker-integrations.ts, with a 400 naming it.
 */

export const TOKEN_LENGTH = { min: 8, max: 500 } as const;

const status = z.enum(FEEDBACK_STATUSES, { error: `must be one of ${FEEDBACK_STATUSES.join(', ')}` });
/**
 * A status as a map's key. A string refined rather than the enum, so that the document describes
 * a map (`additionalProperties`) and not six properties named like statuses.
 */
const statusKey = z
  .string()
  .refine((key) => (FEEDBACK_STATUSES as readonly string[]).includes(key), `must be one of ${FEEDBACK_STATUSES.join(', ')}`);
/** A state of the tracker in a map: GitHub `open|closed|not_planned`; Linear a state type or a state id (checked per kind). */
const mapState = z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(200, 'must be at most 200 characters');

/** What an owner sends of a status map; left-out parts are kept (a new integration starts from the origin's map). */
export const StatusMapInput = z
  .object(
    {
      out: z
        .record(statusKey, mapState, { error: 'must be an object of status: state' })
        .optional()
        .meta({ description: 'Our status → the tracker’s state. Statuses left out keep their state.' }),
      in: z
        .record(mapState, status.nullable(), { error: 'must be an object of state: status' })
        .optional()
        .meta({ description: 'The tracker’s state → our status; null removes a state (it is then unmapped: recorded and ignored).' }),
      labels: z
        .record(
          statusKey,
          z.string({ error: 'must be a label or null' }).min(1, 'must not be empty').max(50, 'must be at most 50 characters').nullable(),
          { error: 'must be an object of status: label' },
        )
        .optional()
        .meta({ description: 'GitHub only: the label each status puts on the issue; null for none.' }),
    },
    { error: 'must be an object with out, in and labels' },
  )
  .strict()
  .meta({ id: 'StatusMapInput', description: 'A change to a tracker integration’s status map (docs/integrations.md, “Status maps”).' });

export const trackerToken = z
  .string({ error: 'must be a string' })
  .trim()
  .min(TOKEN_LENGTH.min, `must be ${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max} characters`)
  .max(TOKEN_LENGTH.max, `must be ${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max} characters`)
  .regex(/^[\x21-\x7e]+$/, 'must be a token as the tracker shows it (printable ASCII, no spaces)');

export const repository = z.string({ error: 'must be a string' }).regex(REPOSITORY_PATTERN, 'must be a GitHub repository as owner/name');

export const linearId = z
  .string({ error: 'must be a string' })
  .min(1, 'must not be empty')
  .max(200, 'must be at most 200 characters')
  .regex(/^[\w-]+$/, 'must be a Linear id (letters, digits, - and _)');

/** An http(s) API address: the shape is checked here, the SSRF guard by the route. */
export const apiUrl = z
  .url({ protocol: z.regexes.httpProtocol, error: 'must be an absolute http or https URL' })
  .max(2048, 'must be at most 2048 characters');

/** The tracker fields of POST and PATCH /projects/:id/integrations. */
export const trackerFields = {
  token: trackerToken.optional(),
  apiUrl: apiUrl.optional(),
  repository: repository.optional(),
  teamId: linearId.optional(),
  linearProjectId: linearId.nullable().optional(),
  statusMap: StatusMapInput.optional(),
  webhookSecret: z
    .string({ error: 'must be a string' })
    .min(16, 'must be 16 to 256 characters')
    .max(256, 'must be 16 to 256 characters')
    .optional(),
  autoCreate: z.boolean({ error: 'must be a boolean' }).optional(),
};

/** Their descriptions in the document. */
export const trackerFieldDocs = {
  token:
    '`github` and `linear`: a GitHub fine-grained token (Issues: read and write) or a Linear API key. Stored sealed (AES-256-GCM under SECRETS_KEY); never returned.',
  apiUrl:
    '`github` and `linear`: the tracker’s API, by default `https://api.github.com` or `https://api.linear.app/graphql` (GitHub Enterprise Server: `https://HOST/api/v3`). A loopback, private or reserved address is refused unless ALLOW_PRIVATE_WEBHOOKS=true.',
  repository:
    '`github`: the repository new issues go to, `owner/name` (POST /projects/{id}/trackers/github/repositories lists those the token reaches).',
  teamId: '`linear`: the team new issues go to (POST /projects/{id}/trackers/linear/teams lists them).',
  linearProjectId: '`linear`, optional: the Linear project new issues go into; null: none.',
  statusMap: '`github` and `linear`: changes to the status map, over the origin’s default for a new integration (docs/integrations.md).',
  webhookSecret:
    '`github` and `linear`: the HMAC key the tracker signs its webhooks with. Omitted on creation: the server generates one and returns it once as `webhook_secret` (paste it into GitHub). Linear makes its own signing secret: set it here.',
  autoCreate:
    '`github` and `linear`, default false: every new item of the project gets its issue here by itself, in the background (a delivery of its `feedback.created`, retried and logged). Items made before, merged ones and anonymous submissions held for approval are left to “Create issue”.',
} as const;

/** POST /projects/:id/trackers/…: a token to try (the setup form, before saving) or a saved integration's. */
export const DiscoveryBody = {
  token: trackerToken.optional(),
  apiUrl: apiUrl.optional(),
  integrationId: z.uuid({ error: 'must be an integration id' }).optional(),
};
