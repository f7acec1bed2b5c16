import type { ParameterizedContext } from 'koa';
import type { Account } from '../oltp/accounts.repo.js';
import type { ProjectWithPlan } from '../oltp/projects.repo.js';

/** What the auth middleware leaves on `ctx.state` for the handlers after it. */
export type AppState = {
  requestId: string;
  /** The project of the X-API-Key, on key-authenticated routes. */
  project?: ProjectWithPlan;
  /** The account of the admin bearer token, on admin routes. */
  account?: Account;
};

export type AppContext = ParameterizedContext<AppState>;
