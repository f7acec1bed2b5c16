import { PLAN_LIMITS } from '../core/plans.js';
import type { Sql } from '../oltp/db.js';
import type { ProjectWithPlan } from '../oltp/projects.repo.js';
import { ownedProject } from './auth.js';
import { forbidden, paymentRequired } from './errors.js';
import type { RequestContext } from './state.js';

/**
 * What a `projectAdmin` route asks beyond a project of the token's account, checked in this order
 * after the project is loaded and before the input is read.
 */
export type ProjectRules = {
  /** Served for a suspended project too (the owner may still see, rename, export, erase it). */
  allowSuspended?: true;
  /** Only the account owner's token: a team member's is a 403 with this reason. */
  ownerOnly?: string;
  /** A plan feature the route needs: without it, a 402 with this reason. */
  plan?: { feature: 'integrations' | 'teamMembers'; reason: string };
};

/**
 * The project of a `projectAdmin` route (define-route.ts): the `:id` project of the token's
 * account (404 when there is none, 403 when it is another account's or suspended, unless the
 * route allows a suspended one), then the route's rules: the owner's token only (403), a plan
 * feature (402).
 */
export async function projectOfRoute(sql: Sql, ctx: RequestContext, rules: ProjectRules = {}): Promise<ProjectWithPlan> {
  const project = await ownedProject(sql, ctx, ctx.params.id ?? '', rules.allowSuspended ? { allowSuspended: true } : {});
  if (rules.ownerOnly && ctx.state.memberId) throw forbidden(rules.ownerOnly);
  if (rules.plan && !PLAN_LIMITS[project.plan][rules.plan.feature]) throw paymentRequired(rules.plan.reason);
  return project;
}
