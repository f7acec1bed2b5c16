import { useLocation, useRoute } from 'preact-iso';
import { Deliveries } from '../components/deliveries';
import { DigestSettings } from '../components/digest';
import { Exports } from '../components/exports';
import { INTEGRATIONS_PLAN, Integrations } from '../components/integrations';
import { Page } from '../components/layout';
import { MEMBERS_PLAN, Members } from '../components/members';
import { CopyButton, PlanGate } from '../components/states';
import { TrackerIntegrations } from '../components/trackers';
import { WebSettings } from '../components/web-settings';
import { type Account, PLAN_LABELS, useAccount } from '../lib/account';
import { useProjects } from '../lib/projects';

/**
 * The settings, one section at a time (a new owner saw one 7,300-pixel column): each section has
 * its own URL (`?section=`), so a link to it can be shared and the back button goes back to it.
 */
const SECTIONS = [
  { slug: 'general', label: 'General' },
  { slug: 'widget', label: 'Widget and board' },
  { slug: 'integrations', label: 'Integrations and deliveries' },
  { slug: 'alerts', label: 'Alerts and digest' },
  { slug: 'members', label: 'Members' },
  { slug: 'data', label: 'Data' },
] as const;
type Section = (typeof SECTIONS)[number]['slug'];

export function SettingsPage() {
  const { params } = useRoute();
  const { query, path } = useLocation();
  const projectId = params.id ?? '';
  const account = useAccount();
  const section: Section = SECTIONS.find((s) => s.slug === query.section)?.slug ?? 'general';
  return (
    <Page title="Settings" projectId={projectId}>
      <nav aria-label="Settings sections" class="section-nav">
        <ul>
          {SECTIONS.map((s) => (
            <li key={s.slug}>
              <a class="section-link" href={`${path}?section=${s.slug}`} aria-current={s.slug === section ? 'page' : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {section === 'general' && <General projectId={projectId} account={account} />}
      {section === 'widget' && <WebSettings projectId={projectId} />}
      {section === 'integrations' && (
        <>
          {account && !account.limits.integrations ? (
            <GatedSection heading="Integrations" account={account} reason={INTEGRATIONS_PLAN} />
          ) : (
            <>
              <Integrations projectId={projectId} />
              <TrackerIntegrations projectId={projectId} />
            </>
          )}
          <Deliveries projectId={projectId} />
        </>
      )}
      {section === 'alerts' && (
        <>
          <section class="card" aria-labelledby="alerts-link-heading">
            <h2 id="alerts-link-heading">Alerts</h2>
            <p>
              Alerts on metrics have <a href={`/projects/${projectId}/alerts`}>a page of their own</a>: the question, the threshold, what it
              would have done over the last 30 intervals, and each alert’s checks.
            </p>
          </section>
          <DigestSettings projectId={projectId} />
        </>
      )}
      {section === 'members' &&
        (account && !account.limits.team_members ? (
          <GatedSection heading="Team members" account={account} reason={MEMBERS_PLAN} />
        ) : (
          <Members projectId={projectId} />
        ))}
      {section === 'data' && (
        <>
          <Exports projectId={projectId} />
          <section class="card" aria-labelledby="erase-link-heading">
            <h2 id="erase-link-heading">Erasure</h2>
            <p>
              An SDK user’s events, feedback and profile are erased from <a href={`/projects/${projectId}/users`}>the SDK users page</a>.
            </p>
          </section>
        </>
      )}
    </Page>
  );
}

/** The project itself: its name, id and plan. */
function General({ projectId, account }: { projectId: string; account: Account | undefined }) {
  const projects = useProjects();
  const project = projects.data?.find((p) => p.id === projectId);
  return (
    <section class="card" aria-labelledby="general-heading">
      <h2 id="general-heading">General</h2>
      <dl class="facts">
        <dt>Name</dt>
        <dd class="break">{project?.name ?? '…'}</dd>
        <dt>Project id</dt>
        <dd>
          <code>{projectId}</code> <CopyButton text={projectId} />
        </dd>
        <dt>Plan</dt>
        <dd>{account ? `${PLAN_LABELS[account.plan]}${account.role === 'member' ? ' (you are a team member)' : ''}` : '…'}</dd>
      </dl>
      <p class="muted">
        API keys are rotated on <a href="/projects">the projects page</a>.
      </p>
    </section>
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
