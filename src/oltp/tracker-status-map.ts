import {
  GITHUB_STATES,
  type GithubIssueChange,
  type GithubState,
  LINEAR_STATE_TYPES,
  type LinearWorkflowState,
  type TrackerKind,
} from '../core/trackers.js';
import { FEEDBACK_STATUSES, type FeedbackStatus } from './feedback.row.js';

/**
 * How a tracker integration's states and our statuses correspond (docs/integrations.md "Status
 * maps"), stored with the integration (tracker_settings.status_map).
 *
 * - `out`: the state each of our statuses puts the issue in. GitHub: `open`, `closed` or
 *   `not_planned`. Linear: a workflow state's id, or a state type (`backlog`, `unstarted`,
 *   `started`, `completed`, `canceled`, `triage`), which means the team's first state of that type.
 * - `in`: the status a state of the tracker gives the item. Keys as `out`'s values (for Linear a
 *   state id wins over its type); a state that is not a key is unmapped: recorded and ignored.
 * - `labels` (GitHub only): the label each status puts on the issue, null for none; the labels of
 *   the map are taken off the issue when another status's label goes on.
 */
export type StatusMap = {
  out: Record<FeedbackStatus, string>;
  in: Record<string, FeedbackStatus>;
  labels?: Record<FeedbackStatus, string | null>;
};

/** A change to a map, as an owner sends it: what is left out is kept; `in` entries set to null are removed. */
export type StatusMapChange = {
  out?: Partial<Record<FeedbackStatus, string>> | undefined;
  in?: Record<string, FeedbackStatus | null> | undefined;
  labels?: Partial<Record<FeedbackStatus, string | null>> | undefined;
};

/**
 * The origin project's map, the default of every new integration: pending → backlog, approved →
 * unstarted, in_progress and testflight → started, completed → done, rejected → canceled. GitHub
 * has only open and closed issues, so the origin's states become its labels there, and an issue is
 * closed when the item is completed (as completed) or rejected (as not planned), open otherwise.
 */
export function defaultStatusMap(kind: TrackerKind): StatusMap {
  if (kind === 'github') {
    return {
      out: { pending: 'open', approved: 'open', in_progress: 'open', testflight: 'open', completed: 'closed', rejected: 'not_planned' },
      in: { open: 'approved', closed: 'completed', not_planned: 'rejected' },
      labels: {
        pending: 'backlog',
        approved: 'unstarted',
        in_progress: 'started',
        testflight: 'started',
        completed: 'done',
        rejected: 'canceled',
      },
    };
  }
  return {
    out: {
      pending: 'backlog',
      approved: 'unstarted',
      in_progress: 'started',
      testflight: 'started',
      completed: 'completed',
      rejected: 'canceled',
    },
    in: { backlog: 'pending', unstarted: 'approved', started: 'in_progress', completed: 'completed', canceled: 'rejected' },
  };
}

/** A map with a change applied. */
export function changedStatusMap(current: StatusMap, change: StatusMapChange): StatusMap {
  const out = { ...current.out, ...stripUndefined(change.out ?? {}) } as Record<FeedbackStatus, string>;
  const inbound: Record<string, FeedbackStatus> = { ...current.in };
  for (const [state, status] of Object.entries(change.in ?? {})) {
    if (status === null) delete inbound[state];
    else inbound[state] = status;
  }
  const next: StatusMap = { out, in: inbound };
  if (current.labels || change.labels) {
    next.labels = { ...(current.labels ?? nullLabels()), ...stripUndefined(change.labels ?? {}) } as Record<FeedbackStatus, string | null>;
  }
  return next;
}

const nullLabels = () => Object.fromEntries(FEEDBACK_STATUSES.map((status) => [status, null])) as Record<FeedbackStatus, null>;

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `value` names a state of this tracker in a map: GitHub's three, or Linear's types and state ids. */
export function isMapState(kind: TrackerKind, value: string): boolean {
  if (kind === 'github') return (GITHUB_STATES as readonly string[]).includes(value);
  return (LINEAR_STATE_TYPES as readonly string[]).includes(value) || UUID.test(value);
}

/** A tracker state as the sync sees it: GitHub's state name, or Linear's state id and its type. */
export type TrackerState = { id: string; type?: string | undefined };

/** Whether the map's state `mapped` (an `out` value, or an `in` key) is `state`. */
export function mapStateIs(mapped: string, state: TrackerState): boolean {
  return mapped === state.id || (state.type !== undefined && mapped === state.type);
}

/**
 * The status a tracker state gives an item, through the map's `in` (a Linear state's id before
 * its type); null when the state is unmapped.
 */
export function statusForState(map: StatusMap, state: TrackerState): FeedbackStatus | null {
  return map.in[state.id] ?? (state.type !== undefined ? map.in[state.type] : undefined) ?? null;
}

/** How GitHub's states read on a link. */
export const GITHUB_STATE_NAMES: Record<GithubState, string> = { open: 'Open', closed: 'Closed', not_planned: 'Closed as not planned' };

/**
 * The Linear state a status puts an issue in: the state the map names by id, else the team's
 * first state (on the board) of the type it names; null when the team has none.
 */
export function linearStateFor(map: StatusMap, status: FeedbackStatus, states: LinearWorkflowState[]): LinearWorkflowState | null {
  const wanted = map.out[status];
  const byId = states.find((state) => state.id === wanted);
  if (byId) return byId;
  return [...states].sort((a, b) => a.position - b.position).find((state) => state.type === wanted) ?? null;
}

/**
 * The change that puts a GitHub issue in a status's state, with its label: the map's other
 * labels come off, the status's goes on, the issue's other labels stay. Null when the issue is
 * there already.
 */
export function githubChangeFor(
  map: StatusMap,
  status: FeedbackStatus,
  issue: { state: GithubState; labels: string[] },
): GithubIssueChange | null {
  const wanted = map.out[status] as GithubState;
  const change: GithubIssueChange = {};
  if (wanted !== issue.state) {
    if (wanted === 'open') Object.assign(change, { state: 'open', state_reason: 'reopened' });
    else Object.assign(change, { state: 'closed', state_reason: wanted === 'not_planned' ? 'not_planned' : 'completed' });
  }
  const label = map.labels?.[status] ?? null;
  const ours = new Set(Object.values(map.labels ?? {}).filter((name): name is string => name !== null));
  const labels = [
    ...issue.labels.filter((name) => !ours.has(name) || name === label),
    ...(label && !issue.labels.includes(label) ? [label] : []),
  ];
  const sameLabels = labels.length === issue.labels.length && labels.every((name) => issue.labels.includes(name));
  if (!sameLabels) change.labels = labels;
  return Object.keys(change).length === 0 ? null : change;
}
