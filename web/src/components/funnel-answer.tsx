import type { Schemas } from '../api/client';
import { formatCount, formatDate, formatDuration, formatPercent } from '../lib/format';
import { PlanNarrowing } from './plan-narrowing';
import { ScrollRegion } from './scroll-region';
import { Empty } from './states';
import { ChangeText } from './tiles';

/*
 * A funnel's answer (POST /insights/funnel): the bars, the steps table with the earlier period's
 * change when `compare` was asked, and the breakdown table. The page (pages/funnels.tsx) holds
 * the form and the URL.
 */

type FunnelResult = Schemas['FunnelResult'];
type Step = FunnelResult['steps'][number];

export function FunnelAnswer({ answer }: { answer: FunnelResult }) {
  const first = answer.steps[0]?.users ?? 0;
  return (
    <>
      <PlanNarrowing echo={answer} what="events" />
      {first === 0 ? (
        <Empty>Nobody did the first step in this range.</Empty>
      ) : (
        <>
          <FunnelBars steps={answer.steps} />
          <StepsTable steps={answer.steps} earlier={(answer as FunnelWithCompare).compare} />
        </>
      )}
      {answer.breakdown !== null && <BreakdownTable answer={answer} />}
    </>
  );
}

/** Bars of each step's users as a share of step 1; the numbers are in the table below, for everyone. */
function FunnelBars({ steps }: { steps: Step[] }) {
  const summary = steps.map((s, i) => `step ${i + 1} ${s.event_name}: ${formatCount(s.users)} users`).join('; ');
  return (
    <figure class="funnel-chart" aria-label="Funnel bar chart" data-testid="funnel-chart">
      <div class="funnel-bars" aria-hidden="true">
        {steps.map((step, i) => (
          <div class="funnel-bar" key={i}>
            <span class="funnel-bar-value">{formatPercent(step.conversion_from_first)}</span>
            <span class="funnel-bar-track">
              <span class="funnel-bar-fill" style={{ height: `${Math.max(1, (step.conversion_from_first ?? 0) * 100)}%` }} />
            </span>
            <span class="funnel-bar-label">
              {i + 1}. {step.event_name}
            </span>
          </div>
        ))}
      </div>
      <figcaption class="visually-hidden">{summary}</figcaption>
    </figure>
  );
}

/** The funnel's answer with `compare` (the earlier period's steps, aligned by position). */
type FunnelWithCompare = FunnelResult & {
  compare?: { date_from: string; date_to: string; retention_clamped: boolean; steps: Step[] };
};

function StepsTable({ steps, earlier }: { steps: Step[]; earlier?: FunnelWithCompare['compare'] }) {
  return (
    <>
      <ScrollRegion label="Funnel steps">
        <table class="data-table" data-testid="funnel-steps">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col" class="num">
                Users
              </th>
              <th scope="col" class="num">
                From first
              </th>
              <th scope="col" class="num">
                From previous
              </th>
              <th scope="col" class="num">
                Median time to convert
              </th>
              {earlier && (
                <>
                  <th scope="col" class="num">
                    Users before
                  </th>
                  <th scope="col" class="num">
                    From first before
                  </th>
                </>
              )}
            </tr>
          </thead>
          <tbody>
            {steps.map((step, i) => (
              <tr key={i}>
                <th scope="row">
                  {i + 1}. {step.event_name}
                </th>
                <td class="num">{formatCount(step.users)}</td>
                <td class="num">{formatPercent(step.conversion_from_first)}</td>
                <td class="num">{i === 0 ? '—' : formatPercent(step.conversion_from_previous)}</td>
                <td class="num">{formatDuration(step.median_seconds_to_convert)}</td>
                {earlier && (
                  <>
                    <td class="num">
                      {formatCount(earlier.steps[i]?.users)} <ChangeText change={changeOf(step.users, earlier.steps[i]?.users)} />
                    </td>
                    <td class="num">{formatPercent(earlier.steps[i]?.conversion_from_first)}</td>
                  </>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {earlier && (
        <p class="muted" data-testid="funnel-compare">
          "Before": the same funnel from {formatDate(earlier.date_from)} to {formatDate(earlier.date_to)}
          {earlier.retention_clamped ? ' (narrowed by your plan’s window)' : ''}, with the change in users.
        </p>
      )}
    </>
  );
}

function BreakdownTable({ answer }: { answer: FunnelResult }) {
  return (
    <>
      <h3 id="funnel-breakdown-heading">By {answer.breakdown}</h3>
      {answer.breakdown_values.length === 0 ? (
        <Empty>No events in this range to break down.</Empty>
      ) : (
        <ScrollRegion label={`Funnel by ${answer.breakdown}`}>
          <table class="data-table" data-testid="funnel-breakdown">
            <thead>
              <tr>
                <th scope="col">{answer.breakdown}</th>
                {answer.steps.map((step, i) => (
                  <th scope="col" class="num" key={i}>
                    {i + 1}. {step.event_name}
                  </th>
                ))}
                <th scope="col" class="num">
                  Overall conversion
                </th>
              </tr>
            </thead>
            <tbody>
              {answer.breakdown_values.map((row) => (
                <tr key={row.value ?? '(none)'}>
                  <th scope="row">{row.value ?? <span class="muted">(not set)</span>}</th>
                  {row.steps.map((step, i) => (
                    <td class="num" key={i}>
                      {formatCount(step.users)}
                    </td>
                  ))}
                  <td class="num">{formatPercent(row.steps[row.steps.length - 1]?.conversion_from_first)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollRegion>
      )}
      {answer.breakdown_values.length > 0 && (
        <p class="muted" data-testid="funnel-breakdown-note">
          A user whose events carry several values of {answer.breakdown} counts in each of those rows, so the rows can add up to more than
          the funnel's users.
        </p>
      )}
    </>
  );
}

/** (now − before) / before, null when before is 0 or unknown: the metrics' `change`. */
function changeOf(now: number, before: number | undefined): number | null {
  return before === undefined || before === 0 ? null : (now - before) / before;
}
