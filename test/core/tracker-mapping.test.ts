import { describe, expect, it } from 'vitest';
import { readGithubDelivery, readLinearDelivery } from '../../src/api/integrations/tracker-webhooks.js';
import { issueDescription, parseIssueReference, withVotesLine } from '../../src/core/trackers.js';
import { defaultStatusMap, githubChangeFor, linearStateFor, statusForState } from '../../src/oltp/tracker-status-map.js';
import { retryAfterMs } from '../../src/workers/trackers/tracker-errors.js';

/* The pure parts of the tracker sync (docs/integrations.md): maps, issue names, webhook payloads, rate-limit waits. */

describe('status maps', () => {
  const github = defaultStatusMap('github');
  const linear = defaultStatusMap('linear');
  const states = [
    { id: 's-triage', name: 'Triage', type: 'triage', position: 0 },
    { id: 's-review', name: 'In Review', type: 'started', position: 4 },
    { id: 's-progress', name: 'In Progress', type: 'started', position: 3 },
    { id: 's-done', name: 'Done', type: 'completed', position: 5 },
    { id: 's-canceled', name: 'Canceled', type: 'canceled', position: 6 },
  ];

  it('GitHub: closes a completed or rejected item’s issue, reopens it otherwise, and swaps the map’s labels only', () => {
    expect(githubChangeFor(github, 'completed', { state: 'open', labels: ['bug', 'started'] })).toEqual({
      state: 'closed',
      state_reason: 'completed',
      labels: ['bug', 'done'],
    });
    expect(githubChangeFor(github, 'rejected', { state: 'closed', labels: ['done'] })).toEqual({
      state: 'closed',
      state_reason: 'not_planned',
      labels: ['canceled'],
    });
    expect(githubChangeFor(github, 'in_progress', { state: 'closed', labels: [] })).toEqual({
      state: 'open',
      state_reason: 'reopened',
      labels: ['started'],
    });
    // testflight and in_progress share a state and a label: nothing to do.
    expect(githubChangeFor(github, 'testflight', { state: 'open', labels: ['started', 'ui'] })).toBeNull();
  });

  it('Linear: a type is the team’s first state of it on the board; an id is that state', () => {
    expect(linearStateFor(linear, 'in_progress', states)?.name).toBe('In Progress');
    expect(linearStateFor({ ...linear, out: { ...linear.out, in_progress: 's-review' } }, 'in_progress', states)?.name).toBe('In Review');
    expect(linearStateFor(linear, 'pending', states)).toBeNull(); // no backlog state in this team
  });

  it('reads a state back through `in`: a Linear state’s id before its type; unmapped is null', () => {
    expect(statusForState(github, { id: 'closed' })).toBe('completed');
    expect(statusForState(github, { id: 'not_planned' })).toBe('rejected');
    expect(statusForState(linear, { id: 's-canceled', type: 'canceled' })).toBe('rejected');
    expect(statusForState({ ...linear, in: { ...linear.in, 's-review': 'testflight' } }, { id: 's-review', type: 'started' })).toBe(
      'testflight',
    );
    expect(statusForState(linear, { id: 's-triage', type: 'triage' })).toBeNull();
  });
});

describe('issue references and descriptions', () => {
  it.each([
    ['github', '#12', { number: 12 }],
    ['github', '12', { number: 12 }],
    ['github', 'https://github.com/acme/app/issues/12', { number: 12, repository: 'acme/app' }],
    ['github', 'https://ghe.example.com/acme/app/issues/12#issuecomment-1', { number: 12, repository: 'acme/app' }],
    ['github', 'ENG-42', null],
    ['linear', 'ENG-42', { identifier: 'ENG-42' }],
    ['linear', 'eng-42', { identifier: 'ENG-42' }],
    ['linear', 'https://linear.app/acme/issue/ENG-42/dark-mode', { identifier: 'ENG-42' }],
    ['linear', '#42', null],
  ] as const)('%s %s', (kind, text, expected) => {
    expect(parseIssueReference(kind, text)).toEqual(expected);
  });

  it('the votes line is rewritten in place; a description without one is left to its authors', () => {
    const text = issueDescription({ title: 't', description: 'Text', voteCount: 3, totalMrr: 1250.5, itemUrl: 'https://x/item' });
    expect(text).toBe('Text\n\n---\n**Votes:** 3 · **Voters’ MRR:** 1,250.5\n[The item in Feedback](https://x/item)');
    expect(withVotesLine(text, 4, null)).toBe(
      'Text\n\n---\n**Votes:** 4 · **Voters’ MRR:** none tracked\n[The item in Feedback](https://x/item)',
    );
    expect(withVotesLine('Written by a person', 4, null)).toBeNull();
  });
});

describe('webhook payloads', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const issue = { number: 7, state: 'closed', state_reason: 'not_planned', title: 'Dark mode', updated_at: '2026-12-01T11:59:00Z' };

  it('GitHub: `issues` closed or reopened in the integration’s repository; everything else is ignored', () => {
    const body = { action: 'closed', issue, repository: { full_name: 'Acme/App' } };
    expect(readGithubDelivery({ delivery: 'd-1', event: 'issues' }, body, 'acme/app', now)).toEqual({
      kind: 'delivery',
      deliveryId: 'd-1',
      event: { tracker: 'github', action: 'closed', number: 7, state: 'not_planned', title: 'Dark mode' },
    });
    expect(readGithubDelivery({ delivery: 'd-2', event: 'issues' }, { ...body, action: 'labeled' }, 'acme/app', now)).toEqual({
      kind: 'delivery',
      deliveryId: 'd-2',
      event: null,
    });
    expect(
      readGithubDelivery({ delivery: 'd-3', event: 'issues' }, { ...body, repository: { full_name: 'acme/other' } }, 'acme/app', now).kind,
    ).toBe('delivery');
    expect(readGithubDelivery({ delivery: undefined, event: 'issues' }, body, 'acme/app', now).kind).toBe('refused');
    expect(
      readGithubDelivery(
        { delivery: 'd-4', event: 'issues' },
        { ...body, issue: { ...issue, updated_at: '2026-12-01T11:54:00Z' } },
        'acme/app',
        now,
      ).kind,
    ).toBe('stale');
  });

  it('Linear: `Issue` `update` with updatedFrom.stateId; the delivery id is the webhook’s id with the timestamp', () => {
    const body = {
      type: 'Issue',
      action: 'update',
      data: { id: 'i-1', stateId: 's-done', state: { id: 's-done', name: 'Done', type: 'completed' }, title: 'Dark mode' },
      updatedFrom: { stateId: 's-progress' },
      webhookId: 'w-1',
      webhookTimestamp: now - 1000,
    };
    expect(readLinearDelivery(body, now)).toEqual({
      kind: 'delivery',
      deliveryId: `w-1:${now - 1000}`,
      event: {
        tracker: 'linear',
        action: 'update',
        issue_id: 'i-1',
        state_id: 's-done',
        state_name: 'Done',
        state_type: 'completed',
        title: 'Dark mode',
      },
    });
    expect(readLinearDelivery({ ...body, updatedFrom: { title: 'old' } }, now)).toMatchObject({ kind: 'delivery', event: null });
    expect(readLinearDelivery({ ...body, webhookTimestamp: now - 6 * 60_000 }, now).kind).toBe('stale');
    expect(readLinearDelivery({ ...body, webhookTimestamp: undefined }, now).kind).toBe('refused');
  });
});

describe('rate-limit waits', () => {
  const now = 1_800_000_000_000;
  it('reads Retry-After (seconds or a date), GitHub’s reset (epoch seconds) and Linear’s (epoch ms)', () => {
    expect(retryAfterMs('30', undefined, now)).toBe(30_000);
    expect(retryAfterMs(new Date(now + 90_000).toUTCString(), undefined, now)).toBe(90_000);
    expect(retryAfterMs(undefined, String(now / 1000 + 120), now)).toBe(120_000);
    expect(retryAfterMs(undefined, String(now + 45_000), now)).toBe(45_000);
    expect(retryAfterMs(undefined, String(now / 1000 - 5), now)).toBe(1_000);
    expect(retryAfterMs(undefined, undefined, now)).toBeNull();
  });
});
