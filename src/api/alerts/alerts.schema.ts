import { z } from 'zod';
import { ALERT_INTERVALS } from '../../core/alerts.js';
import { MAX_PATH_KEYS, PROPERTY_KEY } from '../../olap/filter-sql.js';
import { ACTIVE_USER_MEASURES, ADMIN_SURFACE_MEASURES, PROPERTY_MATH, SESSION_MEASURES } from '../../olap/metrics/measures.js';
import { describe, projectId } from '../shared/building-blocks.js';
import { FilterListField } from '../shared/filters.schema.js';
import { bodySchema } from '../validation.js';

/*
 * An alert's request fields (docs/notifications.md "Alerts"). The question is the metrics API's:
 * a measure of the admin surface (property math `<math>:<property>` included), an optional event
 * and the filter language's list, refused with the same words the metrics API uses.
 */

/** Every measure an alert may watch: the admin surface's, active users, sessions, property math. */
export const ALERT_MEASURES = [...ADMIN_SURFACE_MEASURES, ...ACTIVE_USER_MEASURES, ...SESSION_MEASURES] as const;
const KEY = PROPERTY_KEY.source.replace(/^\^|\$$/g, '');
const PROPERTY_MEASURE = new RegExp(`^(${PROPERTY_MATH.join('|')}):(properties\\.)?${KEY}(\\.${KEY}){0,${MAX_PATH_KEYS - 1}}$`);
const unknownMeasure = (name: unknown) =>
  `unknown measure "${String(name).slice(0, 200)}"; known: ${ALERT_MEASURES.join(', ')}, and ${PROPERTY_MATH.join('|')}:<property>`;

const measure = z
  .string({ error: 'must be a measure name' })
  .refine((name) => (ALERT_MEASURES as readonly string[]).includes(name) || PROPERTY_MEASURE.test(name), {
    error: (issue) => unknownMeasure(issue.input),
  });

const finite = (what: string) =>
  z.number({ error: `must be a number (${what})` }).refine(Number.isFinite, `must be a finite number (${what})`);

const condition = z.preprocess(
  (value, ctx) => {
    const type = value !== null && typeof value === 'object' ? (value as { type?: unknown }).type : undefined;
    if (type === 'above' || type === 'below' || type === 'increase' || type === 'decrease') return value;
    ctx.issues.push({
      code: 'custom',
      input: value,
      path: value !== null && typeof value === 'object' ? ['type'] : [],
      message: 'must be { "type": "above" | "below", "value": N } or { "type": "increase" | "decrease", "percent": N }',
    });
    return z.NEVER;
  },
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.enum(['above', 'below']), value: finite('the threshold') }, { error: 'above and below take only "value"' }),
    z.strictObject(
      {
        type: z.enum(['increase', 'decrease']),
        percent: finite('the percentage').refine((n) => n > 0 && n <= 1_000_000, 'must be more than 0 and at most 1000000'),
      },
      { error: 'increase and decrease take only "percent"' },
    ),
  ]),
);

const channels = z.strictObject(
  {
    integrations: z
      .array(z.uuid({ error: 'must be integration ids (UUIDs)' }), { error: 'must be an array of integration ids' })
      .max(20, 'must be at most 20 integrations')
      .refine((ids) => new Set(ids).size === ids.length, 'must not repeat an integration')
      .optional()
      .default([]),
    email: z.boolean({ error: 'must be a boolean' }).optional().default(false),
  },
  { error: 'must be { "integrations": [ids], "email": true | false }' },
);

const fields = {
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  measure,
  event: z.string({ error: 'must be a string' }).min(1, 'must be 1 to 100 characters').max(100, 'must be 1 to 100 characters').nullable(),
  filters: FilterListField,
  interval: z.enum(ALERT_INTERVALS, { error: `must be one of ${ALERT_INTERVALS.join(', ')}` }),
  condition,
  channels,
  enabled: z.boolean({ error: 'must be a boolean' }),
};

/** POST /projects/:id/alerts. */
export const CreateAlertBody = bodySchema({
  name: fields.name,
  measure: fields.measure,
  event: fields.event.optional().default(null),
  filters: fields.filters.optional().default([]),
  interval: fields.interval,
  condition: fields.condition,
  channels: fields.channels.optional().default({ integrations: [], email: false }),
  enabled: fields.enabled.optional().default(true),
});
export type CreateAlertBody = z.infer<typeof CreateAlertBody>;

/** PATCH /projects/:id/alerts/:alertId: the fields given replace the alert's. */
export const UpdateAlertBody = bodySchema({
  name: fields.name.optional(),
  measure: fields.measure.optional(),
  event: fields.event.optional(),
  filters: fields.filters.optional(),
  interval: fields.interval.optional(),
  condition: fields.condition.optional(),
  channels: fields.channels.optional(),
  enabled: fields.enabled.optional(),
}).refine((body) => Object.values(body).some((value) => value !== undefined), { error: 'at least one field is required' });
export type UpdateAlertBody = z.infer<typeof UpdateAlertBody>;

/** POST /projects/:id/alerts/preview: the question and the condition of an alert, saved or not. */
export const AlertPreviewBody = bodySchema({
  measure: fields.measure,
  event: fields.event.optional().default(null),
  filters: fields.filters.optional().default([]),
  interval: fields.interval,
  condition: fields.condition,
});
export type AlertPreviewBody = z.infer<typeof AlertPreviewBody>;

export const ProjectAlertPath = z.object({
  id: projectId,
  alertId: describe(z.uuid({ error: 'alert not found' }), 'Alert id. 404 when it is not an alert of this project (a malformed id too).'),
});
