import type { ComponentChildren } from 'preact';
import type { Resource } from '../lib/use-resource';
import { Empty, FailureNotice, Loading } from './states';

/**
 * The answer card of an insight page (funnels, retention, paths): its heading, then one of the
 * request's states: nothing asked yet (`asked` false: the hint), loading, failed (with the plan
 * that lifts a 402), or the answer drawn by `children`.
 */
export function InsightResult<T>({
  id,
  heading,
  result,
  asked = true,
  emptyHint,
  loadingWhat,
  planHint,
  children,
}: {
  /** The section's heading id is `${id}-heading`. */
  id: string;
  heading: string;
  result: Resource<T | null>;
  asked?: boolean;
  emptyHint?: string;
  loadingWhat: string;
  planHint: string;
  children: (answer: T) => ComponentChildren;
}) {
  return (
    <section class="card" aria-labelledby={`${id}-heading`} aria-busy={result.state === 'loading'}>
      <h2 id={`${id}-heading`}>{heading}</h2>
      {!asked && <Empty>{emptyHint}</Empty>}
      {asked && result.state === 'loading' && <Loading what={loadingWhat} />}
      {result.state === 'failed' && <FailureNotice failure={result.failure} onRetry={result.reload} planHint={planHint} />}
      {asked && result.state === 'ready' && result.data != null && children(result.data)}
    </section>
  );
}
