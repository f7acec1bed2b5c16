import { useEffect, useState } from 'preact/hooks';
import { api, type Schemas, unwrap } from '../api/client';
import { ApiFailure } from '../api/failure';
import { attempts, type Integration } from '../lib/integrations';

type Delivery = Schemas['Delivery'];
type TestState = { state: 'idle' } | { state: 'sending' } | { state: 'sent'; delivery: Delivery } | { state: 'failed'; reason: string };

/** How often, and how long, the delivery of a test message is followed until it settles. */
const POLL_MS = 700;
const POLL_LIMIT = 40;

/**
 * "Send test" (POST …/integrations/:integrationId/test): one message to this integration through
 * the ordinary deliveries, then its delivery followed until it is delivered or failed, with the
 * receiver's answer when it failed.
 */
export function SendTest({ projectId, integration }: { projectId: string; integration: Integration }) {
  const [test, setTest] = useState<TestState>({ state: 'idle' });

  const send = async () => {
    setTest({ state: 'sending' });
    try {
      const delivery = await unwrap(
        api.POST('/projects/{id}/integrations/{integrationId}/test', {
          params: { path: { id: projectId, integrationId: integration.id } },
        }),
      );
      setTest({ state: 'sent', delivery });
    } catch (error) {
      const failure = ApiFailure.of(error);
      setTest({ state: 'failed', reason: failure.reason });
    }
  };

  const pendingId = test.state === 'sent' && test.delivery.status === 'pending' ? test.delivery.id : null;
  useEffect(() => {
    if (!pendingId) return;
    let live = true;
    let polls = 0;
    const timer = setInterval(async () => {
      polls += 1;
      const list = await unwrap(api.GET('/projects/{id}/deliveries', { params: { path: { id: projectId }, query: { limit: 50 } } })).catch(
        () => null,
      );
      const latest = list?.find((d) => d.id === pendingId);
      if (!live) return;
      if (latest && latest.status !== 'pending') setTest({ state: 'sent', delivery: latest });
      else if (polls >= POLL_LIMIT) clearInterval(timer);
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [pendingId, projectId]);

  return (
    <>
      <button type="button" onClick={send} disabled={test.state === 'sending' || pendingId !== null || !integration.enabled}>
        Send test
      </button>
      <span role="status" class="muted send-test-state" data-testid={`send-test-${integration.id}`}>
        {describe(test)}
      </span>
    </>
  );
}

function describe(test: TestState): string {
  switch (test.state) {
    case 'idle':
      return '';
    case 'sending':
      return 'Sending a test message…';
    case 'failed':
      return `Not sent: ${test.reason}`;
    case 'sent': {
      const { delivery } = test;
      if (delivery.status === 'delivered') return 'Test message delivered.';
      if (delivery.status === 'failed') {
        return `Test message failed after ${attempts(delivery.attempts)}${delivery.last_error ? `: ${delivery.last_error}` : ''}.`;
      }
      return delivery.last_error ? `Test message not delivered yet (${delivery.last_error}); retrying…` : 'Test message queued…';
    }
  }
}
