import { z } from 'zod';
import { TRACKER_KINDS } from '../../core/trackers.js';
import { FEEDBACK_STATUSES } from '../../oltp/feedback.row.js';
import { timestamp, uuid } from '../shared/response-fields.js';
import type { Expect, Out, SameShape } from '../shared/shape-checks.js';
import type { presentLinkedIssue } from './issues.presenter.js';

export const LinkedIssueResponse = z
  .object({
    id: uuid.meta({ description: 'The link’s id (DELETE …/issues/{linkId} unlinks).' }),
    feedback_id: uuid,
    integration_id: uuid,
    kind: z.enum(TRACKER_KINDS),
    external_id: z.string().meta({ description: 'GitHub: the issue’s number; Linear: the issue’s id.' }),
    key: z.string().meta({ description: 'How people name it: `#123` (GitHub) or `ENG-42` (Linear).' }),
    url: z.string().meta({ description: 'The issue in the tracker.' }),
    title: z.string(),
    state: z.string().meta({
      description: 'The tracker’s state as last seen or set: GitHub `open`, `closed` or `not_planned`; Linear a workflow state id.',
    }),
    state_name: z.string().meta({ description: 'The state as the tracker names it (`Open`, `In Progress`, …).' }),
    synced_status: z.enum(FEEDBACK_STATUSES).nullable().meta({
      description: 'Our status that `state` stands for, as last agreed with the tracker (null: not yet, e.g. an issue linked as it was).',
    }),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'LinkedIssue', description: 'An issue in GitHub or Linear linked to a feedback item (docs/integrations.md).' });

export type LinkedIssueResponseChecks = [Expect<SameShape<ReturnType<typeof presentLinkedIssue>, Out<typeof LinkedIssueResponse>>>];
