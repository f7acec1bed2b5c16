import type { Schemas } from '../api/client';
import { formatDate } from '../lib/format';

export type Echo = Pick<
  Schemas['AdminMetricsSummary'],
  'event_scope' | 'retention_clamped' | 'retention_window_days' | 'date_from' | 'date_to'
>;

/** The plan's narrowing of an answer, in words (SPEC 2.8, 8.3): a clamped window and the event scope. */
export function PlanNarrowing({ echo, what = 'metrics' }: { echo: Echo; what?: string }) {
  return (
    <>
      {echo.retention_clamped && (
        <p class="notice notice-plan" role="note" data-testid="clamp-notice">
          Your plan keeps {echo.retention_window_days} days of {what}, so this shows {formatDate(echo.date_from)} to{' '}
          {formatDate(echo.date_to)} instead of the range you asked for.
          {echo.retention_window_days < 365 && ' The Team plan keeps 365 days.'}
        </p>
      )}
      {echo.event_scope === 'predefined_only' && (
        <p class="notice notice-plan" role="note">
          Custom event names are not counted on your plan: only feedback_list, feedback_detail and submit_feedback are read. The Pro and
          Team plans count every event name (already stored ones too).
        </p>
      )}
    </>
  );
}
