import { useMemo, useState } from 'preact/hooks';
import { type EventProperty, eventProperties } from '../lib/contract-api';
import {
  BUILT_IN_PROPERTIES,
  describeFilter,
  type FilterNode,
  type FilterOp,
  kindOf,
  needsNoValue,
  OP_LABELS,
  OPS_BY_KIND,
  parseFilterValue,
  type ValueKind,
} from '../lib/filters';
import { formatCount } from '../lib/format';
import { useResource } from '../lib/use-resource';

const MAX_FILTERS = 20;

/** `plan` and `properties.plan` name the same property; the built-ins keep their own names. */
function normalizeProperty(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '' || BUILT_IN_PROPERTIES.some((p) => p.property === trimmed) || trimmed.startsWith('properties.')) return trimmed;
  return `properties.${trimmed}`;
}

const VALUE_HINTS: Partial<Record<FilterOp, string>> = {
  in: 'Values separated by commas.',
  not_in: 'Values separated by commas.',
  between: 'Two numbers separated by a comma: both ends are included.',
  regex: 'A pattern in ClickHouse’s re2 syntax.',
};

/**
 * The filter bar the metrics, funnels, retention and paths pages share: the filters in force as
 * chips, each removable, and a form that adds one. The property is picked from the keys seen in
 * the window (GET /projects/:id/event-properties, with their JSON types and top values) or typed;
 * the conditions offered are those that fit its type (numbers get comparisons, text gets
 * contains and patterns). The page keeps the list in its URL; `onChange` gives the new list.
 * Groups (`any`) are not built here: a list from a shared link keeps them, shown and removable.
 */
export function FilterBar({
  projectId,
  from,
  to,
  event,
  filters,
  onChange,
  idPrefix = 'filter',
}: {
  projectId: string;
  from: string;
  to: string;
  event?: string | undefined;
  filters: readonly FilterNode[];
  onChange: (filters: FilterNode[]) => void;
  idPrefix?: string;
}) {
  const properties = useResource(() => eventProperties(projectId, { from, to, event }), [projectId, from, to, event]);
  const [property, setProperty] = useState('');
  const [op, setOp] = useState<FilterOp>('eq');
  const [value, setValue] = useState('');
  const [problem, setProblem] = useState<string | null>(null);

  const chosen = normalizeProperty(property);
  const known: EventProperty | undefined = properties.data?.properties.find((p) => p.property === chosen);
  const builtIn = BUILT_IN_PROPERTIES.find((p) => p.property === chosen);
  const kind: ValueKind = builtIn?.kind ?? (known ? kindOf(known.types) : 'string');
  const ops = OPS_BY_KIND[kind];
  const currentOp = ops.includes(op) ? op : 'eq';
  const topValues = useMemo(() => (known?.top_values ?? []).filter((v) => v.value !== null && typeof v.value !== 'object'), [known]);

  const add = () => {
    if (chosen === '') return setProblem('Pick or type a property.');
    // The true/false select starts on true without an input event.
    const parsed = parseFilterValue(currentOp, kind, kind === 'boolean' && value !== 'false' ? 'true' : value);
    if (parsed === null) {
      return setProblem(
        kind === 'number' || currentOp === 'between'
          ? 'Write a number (two for "is between", separated by a comma).'
          : kind === 'boolean'
            ? 'Write true or false.'
            : 'Write a value.',
      );
    }
    setProblem(null);
    onChange([...filters, { property: chosen, op: currentOp, ...parsed }]);
    setValue('');
  };

  const ids = { property: `${idPrefix}-property`, op: `${idPrefix}-op`, value: `${idPrefix}-value`, list: `${idPrefix}-properties` };
  return (
    <section class="card filter-bar" aria-labelledby={`${idPrefix}-heading`}>
      <h2 id={`${idPrefix}-heading`}>Filters</h2>
      {filters.length === 0 ? (
        <p class="muted">No filter: every event in the range counts.</p>
      ) : (
        <ul class="chips" aria-label="Filters in force" data-testid={`${idPrefix}-chips`}>
          {filters.map((node, index) => {
            const text = describeFilter(node);
            return (
              <li class="chip" key={`${index}:${text}`}>
                <span>{text}</span>
                <button
                  type="button"
                  class="link-button chip-remove"
                  aria-label={`Remove filter: ${text}`}
                  onClick={() => onChange(filters.filter((_, i) => i !== index))}
                >
                  ×
                </button>
              </li>
            );
          })}
          {filters.length > 1 && (
            <li>
              <button type="button" class="link-button" onClick={() => onChange([])}>
                Remove all
              </button>
            </li>
          )}
        </ul>
      )}
      <form
        class="filters"
        aria-label="Add a filter"
        onSubmit={(e) => {
          e.preventDefault();
          add();
        }}
      >
        <datalist id={ids.list}>
          {BUILT_IN_PROPERTIES.map((p) => (
            <option key={p.property} value={p.property}>
              {p.label}
            </option>
          ))}
          {(properties.data?.properties ?? []).map((p) => (
            <option key={p.property} value={p.property}>
              {p.types.join(', ')}
            </option>
          ))}
        </datalist>
        <div class="field">
          <label for={ids.property}>Property</label>
          <input
            id={ids.property}
            list={ids.list}
            value={property}
            placeholder="properties.plan"
            autoComplete="off"
            maxLength={200}
            aria-describedby={`${idPrefix}-property-help`}
            onInput={(e) => setProperty(e.currentTarget.value)}
          />
        </div>
        <div class="field">
          <label for={ids.op}>Condition</label>
          <select id={ids.op} value={currentOp} onChange={(e) => setOp(e.currentTarget.value as FilterOp)}>
            {ops.map((o) => (
              <option key={o} value={o}>
                {OP_LABELS[o]}
              </option>
            ))}
          </select>
        </div>
        {!needsNoValue(currentOp) && kind === 'boolean' && (
          <div class="field">
            <label for={ids.value}>Value</label>
            <select id={ids.value} value={value === 'false' ? 'false' : 'true'} onChange={(e) => setValue(e.currentTarget.value)}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          </div>
        )}
        {!needsNoValue(currentOp) && kind !== 'boolean' && (
          <div class="field">
            <label for={ids.value}>Value</label>
            <input
              id={ids.value}
              list={topValues.length > 0 ? `${ids.value}-list` : undefined}
              value={value}
              autoComplete="off"
              inputMode={kind === 'number' ? 'decimal' : undefined}
              maxLength={1000}
              aria-describedby={VALUE_HINTS[currentOp] ? `${ids.value}-hint` : undefined}
              onInput={(e) => setValue(e.currentTarget.value)}
            />
            {topValues.length > 0 && (
              <datalist id={`${ids.value}-list`}>
                {topValues.map((v) => (
                  <option key={String(v.value)} value={String(v.value)}>
                    {formatCount(v.count)} events
                  </option>
                ))}
              </datalist>
            )}
          </div>
        )}
        <button type="submit" disabled={filters.length >= MAX_FILTERS}>
          Add filter
        </button>
        <p id={`${idPrefix}-property-help`} class="muted field-note">
          {properties.state === 'failed'
            ? 'The properties seen in this range could not be listed: type one (properties.plan, event_name, user_id, user.mrr).'
            : `A property of the events (${formatCount(properties.data?.properties.length ?? 0)} seen in this range), or event_name, user_id, user.mrr. ${kindHint(kind, known)}`}
          {VALUE_HINTS[currentOp] && <span id={`${ids.value}-hint`}> {VALUE_HINTS[currentOp]}</span>}
        </p>
        {problem && (
          <p class="field-error" role="alert">
            {problem}
          </p>
        )}
      </form>
    </section>
  );
}

function kindHint(kind: ValueKind, known: EventProperty | undefined): string {
  if (!known) return '';
  return kind === 'number' ? 'It holds numbers.' : kind === 'boolean' ? 'It holds true or false.' : 'It holds text.';
}
