import { z } from 'zod';
import { PLANS } from '../../core/plans.js';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentAccount } from './account.presenter.js';

// The admin token's account and its plan

const unlimited = (description: string) =>
  z
    .number()
    .int()
    .min(1)
    .nullable()
    .meta({ description: `${description} null: unlimited.` });

export const PlanLimitsResponse = z
  .object({
    max_projects: unlimited('Projects the account may have.'),
    max_feedback_per_project: unlimited('Feedback items per project.'),
    team_members: z.boolean().meta({ description: 'Team members with their own admin tokens.' }),
    integrations: z.boolean().meta({ description: 'Slack, Discord and webhook integrations.' }),
    voter_notifications: z.boolean().meta({ description: 'Status change emails to voters who opted in.' }),
    custom_events_readable: z.boolean().meta({ description: 'The raw event feed and breakdowns by custom event or property in metrics.' }),
    metrics_window_days: z.number().int().min(1).meta({ description: 'How far back metrics reach, in days (longer ranges are clamped).' }),
    max_alerts_per_project: z
      .number()
      .int()
      .min(0)
      .meta({ description: 'Alerts on metrics per project (0: none on this plan; docs/notifications.md "Alerts").' }),
  })
  .meta({ id: 'PlanLimits', description: 'What the plan allows (SPEC 8.2).' });

export const AccountResponse = z
  .object({
    id: uuid,
    email: z.string(),
    plan: z.enum(PLANS),
    role: z.enum(['owner', 'member']).meta({ description: '`owner` for the account’s own token, `member` for a team member’s.' }),
    limits: PlanLimitsResponse,
    created_at: timestamp,
  })
  .meta({ id: 'SignedInAccount', description: 'The account of the admin token, with its plan’s limits.' });

export type AccountResponseChecks = [Expect<SameShape<ReturnType<typeof presentAccount>, Out<typeof AccountResponse>>>];
