import type { Schemas } from '../api/client';
import { formatCount, formatMoney } from '../lib/format';
import { formatChange } from '../lib/measures';

export type Measures = Schemas['AdminMeasureValues'];

const TILES: { key: keyof Measures; label: string; money?: boolean; adminOnly?: boolean }[] = [
  { key: 'event_count', label: 'Events' },
  { key: 'unique_event_users', label: 'Unique users' },
  { key: 'feedback_count', label: 'New feedback' },
  { key: 'vote_count', label: 'Net votes' },
  { key: 'comment_count', label: 'Comments' },
  { key: 'sdk_users', label: 'SDK users', adminOnly: true },
  { key: 'new_sdk_users', label: 'New SDK users', adminOnly: true },
  { key: 'active_sdk_users', label: 'Active SDK users', adminOnly: true },
  { key: 'paying_users', label: 'Paying users', adminOnly: true },
  { key: 'total_mrr', label: 'Total MRR', money: true, adminOnly: true },
  { key: 'voter_mrr', label: "Voters' MRR", money: true, adminOnly: true },
];

/**
 * The summary's measures as tiles. The SDK-user and revenue measures are read with an admin or
 * member token only (docs/metrics.md): the project's API key, which ships inside the apps, never
 * gets them. Those tiles are marked, and the legend says in words what the mark means.
 */
export function Tiles({
  measures,
  only,
  changes,
}: {
  measures: Measures;
  only?: (keyof Measures)[];
  /** With a comparison: each measure's change against the earlier period. */
  changes?: Record<string, number | null> | undefined;
}) {
  const tiles = only ? TILES.filter((tile) => only.includes(tile.key)) : TILES;
  const anyAdminOnly = tiles.some((tile) => tile.adminOnly);
  return (
    <>
      <dl class="tiles">
        {tiles.map((tile) => (
          <div class={tile.adminOnly ? 'tile tile-admin' : 'tile'} key={tile.key}>
            <dt>
              {tile.label}
              {tile.adminOnly && (
                <span class="tile-mark" aria-hidden="true" title="Admin token only: not readable with the API key">
                  {' '}
                  ◆
                </span>
              )}
              {tile.adminOnly && <span class="visually-hidden"> (admin token only)</span>}
            </dt>
            <dd data-testid={`tile-${tile.key}`}>{tile.money ? formatMoney(measures[tile.key]) : formatCount(measures[tile.key])}</dd>
            {changes && tile.key in changes && <ChangeNote change={changes[tile.key]} />}
          </div>
        ))}
      </dl>
      {anyAdminOnly && (
        <p class="muted tiles-legend" data-testid="tiles-legend">
          <span class="tile-mark" aria-hidden="true">
            ◆
          </span>{' '}
          Admin token only: these measures about your SDK users and their revenue are read with an admin or member token, as here, on every
          plan. The project's API key, which ships inside your apps, cannot read them.
        </p>
      )}
    </>
  );
}

/** A comparison's change under a tile's value: "+12.5% vs previous period", coloured by its sign. */
export function ChangeNote({ change }: { change: number | null | undefined }) {
  return <dd class={`change${changeClass(change)}`}>{formatChange(change)} vs previous period</dd>;
}

/** The same change inside a table cell. */
export function ChangeText({ change }: { change: number | null | undefined }) {
  return <span class={`change${changeClass(change)}`}>{formatChange(change)}</span>;
}

const changeClass = (change: number | null | undefined) =>
  change === null || change === undefined || change === 0 ? '' : change > 0 ? ' change-up' : ' change-down';
