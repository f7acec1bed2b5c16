import { PLAN_LIMITS } from '../../core/plans.js';
import { apiTime } from '../../core/time.js';
import type { Account } from '../../oltp/accounts.repo.js';

/**
 * The signed-in account with what its plan allows (core/plans.ts), so a client can explain a gate
 * before the API answers 402. `role` says whose token it is: the owner's or a team member's.
 */
export function presentAccount(account: Account, memberId: string | null) {
  const limits = PLAN_LIMITS[account.plan];
  return {
    id: account.id,
    email: account.email,
    plan: account.plan,
    role: memberId === null ? ('owner' as const) : ('member' as const),
    limits: {
      max_projects: limits.maxProjects,
      max_feedback_per_project: limits.maxFeedbackPerProject,
      team_members: limits.teamMembers,
      integrations: limits.integrations,
      voter_notifications: limits.voterNotifications,
      custom_events_readable: limits.customEventsReadable,
      metrics_window_days: limits.metricsWindowDays,
      max_alerts_per_project: limits.maxAlertsPerProject,
    },
    created_at: apiTime(account.created_at),
  };
}
