import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ApiFailure } from '../api/failure';

export function Loading({ what }: { what: string }) {
  return (
    <p class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> Loading {what}…
    </p>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="state state-empty">{children}</div>;
}

/**
 * What a failed call means for the owner, in words: 401 → sign in again, 402 → the plan that
 * lifts the limit, 429 → wait and retry, 5xx → the request id to give the operator.
 */
export function FailureNotice({ failure, onRetry, planHint }: { failure: ApiFailure; onRetry?: () => void; planHint?: string }) {
  if (failure.status === 401) {
    return (
      <div class="notice notice-error" role="alert">
        <p>The service did not accept your token ({failure.reason}).</p>
        <p>
          <a href="/signin">Sign in again</a>
        </p>
      </div>
    );
  }
  if (failure.status === 402) return <PlanGate reason={failure.reason} lift={planHint} />;
  if (failure.status === 429) return <RateLimited failure={failure} onRetry={onRetry} />;
  if (failure.status === 0 || failure.status >= 500) {
    return (
      <div class="notice notice-error" role="alert">
        <p>
          {failure.status === 0 ? 'The service could not be reached.' : `The service failed to answer (${failure.status}).`} Try again in a
          moment; if it keeps failing, give the operator this request id:{' '}
          <code class="request-id">{failure.requestId ?? 'none (no response)'}</code>
        </p>
        {onRetry && (
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        )}
      </div>
    );
  }
  return (
    <div class="notice notice-error" role="alert">
      <p>
        {describeStatus(failure.status)}: {failure.reason}
      </p>
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

function describeStatus(status: number): string {
  switch (status) {
    case 400:
      return 'The service refused the request';
    case 403:
      return 'Not allowed';
    case 404:
      return 'Not found';
    case 409:
      return 'Conflict';
    default:
      return `Refused (${status})`;
  }
}

/** A 402: what the plan does not include, and which plan includes it. */
export function PlanGate({ reason, lift }: { reason: string; lift?: string | undefined }) {
  const sentence = `${reason.charAt(0).toUpperCase()}${reason.slice(1)}${reason.endsWith('.') ? '' : '.'}`;
  return (
    <div class="notice notice-plan" role="note" aria-label="Plan limit">
      <p>
        <strong>Not on your plan.</strong> {sentence}
      </p>
      {lift && <p>{lift}</p>}
      <p class="muted">Plans are changed by the service's operator.</p>
    </div>
  );
}

function RateLimited({ failure, onRetry }: { failure: ApiFailure; onRetry?: (() => void) | undefined }) {
  const [left, setLeft] = useState(failure.retryAfterSeconds ?? 5);
  useEffect(() => {
    if (left <= 0) return;
    const timer = setTimeout(() => setLeft((s) => s - 1), 1000);
    return () => clearTimeout(timer);
  }, [left]);
  return (
    <div class="notice notice-warn" role="alert">
      <p>Too many requests: the service asks to wait {left > 0 ? `${left} s` : 'a moment'} before trying again.</p>
      {onRetry && (
        <button type="button" onClick={onRetry} disabled={left > 0}>
          {left > 0 ? `Retry in ${left} s` : 'Retry now'}
        </button>
      )}
    </div>
  );
}

/** A secret shown once (a new API key, a member's token) with a copy button. */
export function OneTimeSecret({ label, value, onDone }: { label: string; value: string; onDone: () => void }) {
  return (
    <section class="notice notice-secret" aria-label={label}>
      <p>
        <strong>{label}</strong>: shown only this once. Copy it now and keep it somewhere safe.
      </p>
      <p class="secret-row">
        <code class="secret" data-testid="one-time-secret">
          {value}
        </code>
        <CopyButton text={value} />
      </p>
      <button type="button" onClick={onDone}>
        I have copied it
      </button>
    </section>
  );
}

export function CopyButton({ text }: { text: string }) {
  const [copied, setCopied] = useState<'idle' | 'done' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('done');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        Copy
      </button>
      <span role="status" class="muted">
        {copied === 'done' ? ' Copied.' : copied === 'failed' ? ' Copy failed: select the text and copy it.' : ''}
      </span>
    </>
  );
}
