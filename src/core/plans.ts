/** Subscription tiers and what they allow (SPEC 8.2). The one place these numbers live. */
export const PLANS = ['free', 'pro', 'team'] as const;
export type Plan = (typeof PLANS)[number];

type PlanLimits = {
  /** null: unlimited */
  maxProjects: number | null;
  maxFeedbackPerProject: number | null;
  teamMembers: boolean;
  integrations: boolean;
  voterNotifications: boolean;
  customEventsReadable: boolean;
  metricsWindowDays: number;
  /** Alerts on metrics per project (docs/notifications.md "Alerts"); 0: none. */
  maxAlertsPerProject: number;
};

export const PLAN_LIMITS: Record<Plan, PlanLimits> = {
  free: {
    maxProjects: 1,
    maxFeedbackPerProject: 10,
    teamMembers: false,
    integrations: false,
    voterNotifications: false,
    customEventsReadable: false,
    metricsWindowDays: 30,
    maxAlertsPerProject: 0,
  },
  pro: {
    maxProjects: 2,
    maxFeedbackPerProject: null,
    teamMembers: false,
    integrations: true,
    voterNotifications: false,
    customEventsReadable: true,
    metricsWindowDays: 30,
    maxAlertsPerProject: 5,
  },
  team: {
    maxProjects: null,
    maxFeedbackPerProject: null,
    teamMembers: true,
    integrations: true,
    voterNotifications: true,
    customEventsReadable: true,
    metricsWindowDays: 365,
    maxAlertsPerProject: 50,
  },
};
