import { useRoute } from 'preact-iso';
import { Deliveries } from '../components/deliveries';
import { Exports } from '../components/exports';
import { INTEGRATIONS_PLAN, Integrations } from '../components/integrations';
import { Page } from '../components/layout';
import { MEMBERS_PLAN, Members } from '../components/members';
import { PlanGate } from '../components/states';
import { WebSettings } from '../components/web-settings';
import { type Account, PLAN_LABELS, useAccount } from '../lib/account';

export function SettingsPage() {
  const { params } = useRoute();
  const projectId = params.id ?? '';
  const account = useAccount();
  return (
    <Page title="Settings" projectId={projectId}>
      <WebSettings projectId={projectId} />
      {account && !account.limits.integrations ? (
        <GatedSection heading="Integrations" account={account} reason={INTEGRATIONS_PLAN} />
      ) : (
        <Integrations projectId={projectId} />
      )}
      {account && !account.limits.team_members ? (
        <GatedSection heading="Team members" account={account} reason={MEMBERS_PLAN} />
      ) : (
        <Members projectId={projectId} />
      )}
      <Deliveries projectId={projectId} />
      <Exports projectId={projectId} />
    </Page>
  );
}

/**
 * A section the account's plan leaves out, explained before anything is tried (GET /account):
 * no form that could only end in a 402. Until the account is known the section is drawn, and the
 * API's 402 explains it.
 */
function GatedSection({ heading, account, reason }: { heading: string; account: Account; reason: string }) {
  const id = `${heading.toLowerCase().replace(/\W+/g, '-')}-heading`;
  return (
    <section class="card" aria-labelledby={id}>
      <h2 id={id}>{heading}</h2>
      <PlanGate reason={`${reason.replace(/\.$/, '')}; this account is on the ${PLAN_LABELS[account.plan]} plan`} />
    </section>
  );
}
