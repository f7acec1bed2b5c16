import { escapeHtml } from './html.js';

/**
 * The weekly digest (docs/notifications.md "The weekly digest"): what one project's week was,
 * computed once (by the worker on Monday, or for the week so far by the preview) and rendered as
 * the email's HTML and plain text. Pure: the figures come from the stores, the links from the caller.
 */

/** A feedback item as the digest lists it. */
export type DigestItem = { id: string; title: string; status: string; vote_count: number; total_mrr: number | null };

export type DigestStatusChange = DigestItem & { previous_status: string; changes: number; changed_at: string };

export type DigestFigure = { value: number; previous: number; change: number | null };

export type DigestFiredAlert = { alert_id: string; name: string; interval_start: string; value: number | null; fired_at: string };

export type DigestContent = {
  project: { id: string; name: string };
  /** The days covered, both ends included (Monday to Sunday; to today for the week so far). */
  week: { date_from: string; date_to: string; complete: boolean };
  feedback: {
    /** Items created in the week (the metrics' feedback_count for the same days). */
    new_count: number;
    /** The week's new items (merged ones left out) with the most votes, and with the most voters' MRR. */
    top_by_votes: DigestItem[];
    top_by_mrr: DigestItem[];
  };
  /** Items whose status changed in the week (latest change first, at most 20 listed), and the count. */
  status_changes: { count: number; items: DigestStatusChange[] };
  /** Items moved to completed in the week (their last change in the week), and the count. */
  shipped: { count: number; items: DigestStatusChange[] };
  /** Events, unique users and sessions, each against the same days of the week before. */
  activity: { events: DigestFigure; unique_users: DigestFigure; sessions: DigestFigure };
  /** The alerts whose state became firing in the week, oldest first. */
  alerts_fired: DigestFiredAlert[];
};

/** How many items of each list the digest shows. */
export const DIGEST_TOP = 5;
export const DIGEST_LISTED_CHANGES = 20;

const STATUS_WORDS: Record<string, string> = {
  pending: 'Pending',
  approved: 'Approved',
  in_progress: 'In progress',
  testflight: 'In beta (TestFlight)',
  completed: 'Completed',
  rejected: 'Rejected',
};
const statusWord = (status: string) => STATUS_WORDS[status] ?? status;

const count = (n: number) => n.toLocaleString('en-US');
const percent = (change: number | null) =>
  change === null
    ? 'no earlier figure'
    : `${change >= 0 ? '+' : ''}${(change * 100).toLocaleString('en-US', { maximumFractionDigits: 1 })}%`;
const money = (value: number | null) => (value === null ? '–' : value.toLocaleString('en-US', { maximumFractionDigits: 2 }));

export type RenderedDigest = { subject: string; text: string; html: string };

/**
 * The digest as an email: subject, plain text and HTML, with links into the dashboard at
 * `publicUrl` and, for a recipient's copy, the unsubscribe link.
 */
export function renderDigest(content: DigestContent, links: { publicUrl: string; unsubscribeUrl?: string | null }): RenderedDigest {
  const { project, week, feedback, activity } = content;
  const span = `${week.date_from} to ${week.date_to}`;
  const subject = `[${project.name}] Your week: ${count(feedback.new_count)} new feedback, ${count(activity.events.value)} events`.replace(
    /[\r\n]+/g,
    ' ',
  );
  const dashboard = `${links.publicUrl}/projects/${project.id}`;
  const itemUrl = (id: string) => `${dashboard}/feedback/${id}`;
  const figure = (label: string, f: DigestFigure) =>
    `${label}: ${count(f.value)} (week before: ${count(f.previous)}, ${percent(f.change)})`;
  const itemLine = (item: DigestItem) =>
    `${item.title}: ${count(item.vote_count)} votes, voters' MRR ${money(item.total_mrr)} (${statusWord(item.status)})`;
  const changeLine = (item: DigestStatusChange) => `${item.title}: ${statusWord(item.previous_status)} → ${statusWord(item.status)}`;
  const alertLine = (alert: DigestFiredAlert) =>
    `${alert.name}: fired for the interval from ${alert.interval_start} (value ${alert.value === null ? 'none' : count(alert.value)})`;

  const sections: { heading: string; lines: string[]; links?: string[]; empty: string }[] = [
    {
      heading: 'Activity',
      lines: [figure('Events', activity.events), figure('Unique users', activity.unique_users), figure('Sessions', activity.sessions)],
      empty: '',
    },
    {
      heading: `New feedback: ${count(feedback.new_count)}`,
      lines: feedback.top_by_votes.map(itemLine),
      links: feedback.top_by_votes.map((item) => itemUrl(item.id)),
      empty: 'No new feedback this week.',
    },
    {
      heading: 'New feedback with the most voters’ MRR',
      lines: feedback.top_by_mrr.map(itemLine),
      links: feedback.top_by_mrr.map((item) => itemUrl(item.id)),
      empty: 'No new item has voters with MRR.',
    },
    {
      heading: `Status changes: ${count(content.status_changes.count)}`,
      lines: content.status_changes.items.map(changeLine),
      links: content.status_changes.items.map((item) => itemUrl(item.id)),
      empty: 'No status changed this week.',
    },
    {
      heading: `Shipped: ${count(content.shipped.count)}`,
      lines: content.shipped.items.map((item) => item.title),
      links: content.shipped.items.map((item) => itemUrl(item.id)),
      empty: 'Nothing shipped this week.',
    },
    {
      heading: `Alerts that fired: ${count(content.alerts_fired.length)}`,
      lines: content.alerts_fired.map(alertLine),
      empty: 'No alert fired this week.',
    },
  ];
  const intro = `${project.name}, ${span}${week.complete ? '' : ' (the week so far)'}.`;
  const footer = 'You receive this weekly digest because it is turned on for you in the project’s settings.';
  const text = [
    intro,
    '',
    ...sections.flatMap((section) => [
      section.heading,
      ...(section.lines.length === 0 && section.empty ? [`  ${section.empty}`] : []),
      ...section.lines.map((line, i) => `  - ${line}${section.links?.[i] ? ` <${section.links[i]}>` : ''}`),
      '',
    ]),
    `Dashboard: ${dashboard}/metrics`,
    '',
    '--',
    footer,
    ...(links.unsubscribeUrl ? [`Unsubscribe: ${links.unsubscribeUrl}`] : []),
  ].join('\n');
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif; line-height: 1.4">',
    `<p>${escapeHtml(intro)}</p>`,
    ...sections.flatMap((section) => [
      `<h2 style="font-size: 1.1em">${escapeHtml(section.heading)}</h2>`,
      section.lines.length === 0
        ? section.empty
          ? `<p>${escapeHtml(section.empty)}</p>`
          : ''
        : `<ul>${section.lines
            .map((line, i) => {
              const link = section.links?.[i];
              return `<li>${link ? `<a href="${escapeHtml(link)}">${escapeHtml(line)}</a>` : escapeHtml(line)}</li>`;
            })
            .join('')}</ul>`,
    ]),
    `<p><a href="${escapeHtml(`${dashboard}/metrics`)}">Open the dashboard</a></p>`,
    `<hr><p style="color: #666; font-size: 0.9em">${escapeHtml(footer)}`,
    ...(links.unsubscribeUrl ? [` <a href="${escapeHtml(links.unsubscribeUrl)}">Unsubscribe</a>`] : []),
    '</p></body></html>',
  ]
    .filter((line) => line !== '')
    .join('\n');
  return { subject, text, html };
}

/** A status change as the facts record it (src/olap/metrics/digest.queries.ts). */
export type DigestChangeFact = { feedback_id: string; status: string; previous_status: string; changes: number; changed_at: string };

/** Monday 00:00 UTC of the week that holds `instant`. */
export function weekStartOf(instant: Date): Date {
  const d = new Date(instant.getTime());
  d.setUTCHours(0, 0, 0, 0);
  return new Date(d.getTime() - ((d.getUTCDay() + 6) % 7) * 24 * 3600 * 1000);
}

/**
 * The digest of a project's week from its parts: the PostgreSQL ones (new items, the changed
 * items' titles, the alerts that fired) and the ClickHouse ones (status changes, activity). A
 * changed item that no longer exists (deleted since) is left out of the lists, not of the counts.
 */
export function assembleDigest(parts: {
  project: { id: string; name: string };
  week: DigestContent['week'];
  feedback: DigestContent['feedback'];
  changes: DigestChangeFact[];
  items: Map<string, DigestItem>;
  activity: DigestContent['activity'];
  alerts: DigestFiredAlert[];
}): DigestContent {
  const withItem = (fact: DigestChangeFact): DigestStatusChange[] => {
    const item = parts.items.get(fact.feedback_id);
    return item
      ? [{ ...item, status: fact.status, previous_status: fact.previous_status, changes: fact.changes, changed_at: fact.changed_at }]
      : [];
  };
  const shipped = parts.changes.filter((fact) => fact.status === 'completed');
  return {
    project: parts.project,
    week: parts.week,
    feedback: parts.feedback,
    status_changes: { count: parts.changes.length, items: parts.changes.flatMap(withItem).slice(0, DIGEST_LISTED_CHANGES) },
    shipped: { count: shipped.length, items: shipped.flatMap(withItem).slice(0, DIGEST_LISTED_CHANGES) },
    activity: parts.activity,
    alerts_fired: parts.alerts,
  };
}
